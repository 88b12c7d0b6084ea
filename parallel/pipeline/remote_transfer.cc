// RemoteTransfers: headers (message key, tensor index, dtype, memory format, shape) and tensors through the
// pipeline's links; messages received ahead of their turn wait in a map.
#include "parallel/pipeline/remote_transfer.h"

#include <array>
#include <map>
#include <string>

#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

constexpr int64_t kMagic = 0x6261746f6e;  // "baton"
constexpr int kMaxRank = 6;
// [magic, from, to, micro-batch, kind, index, count, defined, dtype, memory format, rank, dims...]
constexpr int64_t kHeaderLength = 11 + kMaxRank;

std::string describe(const MailboxKey& key) {
  return std::string(key.kind == MessageKind::activation ? "activations" : "gradients") + " of micro-batch " +
         std::to_string(key.micro_batch) + " from stage " + std::to_string(key.from) + " to stage " +
         std::to_string(key.to);
}

// A header tensor on the communicator's device (the host for inproc and mpi).
Tensor header_tensor(const comm::Communicator& comm, const std::vector<int64_t>& values, Context& ctx) {
  if (comm.device().is_cpu()) {
    Tensor t = Tensor::empty_host({kHeaderLength}, DType::i64);
    std::copy(values.begin(), values.end(), t.data<int64_t>());
    return t;
  }
  return Tensor::from_vector(values, {kHeaderLength}, ctx.stream());
}

std::vector<int64_t> read_header(const Tensor& header, Context& ctx) {
  if (header.device().is_cpu()) {
    const int64_t* p = header.data<int64_t>();
    return {p, p + kHeaderLength};
  }
  return header.to_vector<int64_t>(ctx.stream());
}

}  // namespace

RemoteTransfers::RemoteTransfers(const PipelineLinks& links, std::function<int(int stage)> position_of)
    : links_(links), position_of_(std::move(position_of)) {}

RemoteTransfers::~RemoteTransfers() {
  for (const InFlight& send : sends_) {
    try {
      send.work->wait();
    } catch (...) {  // the run failed already; its first error is the one reported
    }
  }
}

void RemoteTransfers::send(const MailboxKey& key, const std::vector<Tensor>& tensors, Context& ctx) {
  const PeerLink link = links_.to(position_of_(key.to));
  const auto count = static_cast<int64_t>(tensors.size());
  for (int64_t k = 0; k < count; ++k) {
    const Tensor& t = tensors[static_cast<size_t>(k)];
    BATON_CHECK(!t.defined() || t.rank() <= kMaxRank, "sending ", describe(key), ": a tensor of rank ", t.rank(),
                " (pipelines across processes move tensors of rank up to ", kMaxRank, ")");
    std::vector<int64_t> header = {
        kMagic, key.from, key.to, key.micro_batch, static_cast<int64_t>(key.kind), k, count, t.defined() ? 1 : 0};
    header.push_back(t.defined() ? static_cast<int64_t>(t.dtype()) : 0);
    header.push_back(t.defined() ? static_cast<int64_t>(t.format()) : 0);  // a channels-last value stays so
    header.push_back(t.defined() ? t.rank() : 0);
    for (int d = 0; d < kMaxRank; ++d) header.push_back(t.defined() && d < t.rank() ? t.size(d) : 0);
    const Tensor head = header_tensor(*link.comm, header, ctx);
    sends_.push_back({link.comm, link.comm->send(head, link.peer, ctx.stream()), head});
    if (t.defined()) sends_.push_back({link.comm, link.comm->send(t, link.peer, ctx.stream()), t});
  }
  // nccl queues sends and receives until the host waits on that communicator: done() (in
  // release_completed) issues them now, so that the receiver is not left waiting for a message this
  // process has not let go of.
  release_completed();
}

void RemoteTransfers::release_completed() {
  std::map<comm::Communicator*, bool> all_done;
  for (const InFlight& send : sends_) {
    const bool done = send.work->done();
    all_done.try_emplace(send.link, true).first->second &= done;
  }
  std::erase_if(sends_, [&](const InFlight& send) { return all_done.at(send.link); });
}

void RemoteTransfers::take_next(int from, Context& ctx) {
  const PeerLink link = links_.from(from);
  comm::Communicator& comm = *link.comm;
  const int peer = link.peer;
  std::vector<Tensor> tensors;
  MailboxKey key;
  int64_t count = 1;
  for (int64_t k = 0; k < count; ++k) {
    Tensor header = comm.device().is_cpu() ? Tensor::empty_host({kHeaderLength}, DType::i64)
                                           : Tensor::empty({kHeaderLength}, DType::i64, ctx);
    comm.recv(header, peer, ctx.stream())->wait();
    const std::vector<int64_t> h = read_header(header, ctx);
    BATON_CHECK(h[0] == kMagic && h[5] == k && h[6] >= 1 && h[8] >= 0 && h[8] <= static_cast<int64_t>(DType::u8) &&
                    h[9] >= 0 && h[9] <= static_cast<int64_t>(MemoryFormat::channels_last) && h[10] >= 0 &&
                    h[10] <= kMaxRank,
                "pipeline position ", from,
                " sent a message this process cannot read (not a stage transfer, or out "
                "of step: a schedule that differs between the processes?)");
    const MailboxKey got{static_cast<int>(h[1]), static_cast<int>(h[2]), static_cast<int>(h[3]),
                         static_cast<MessageKind>(h[4])};
    if (k == 0) {
      key = got;
      count = h[6];
      tensors.resize(static_cast<size_t>(count));
    }
    BATON_CHECK(got == key, "pipeline position ", from, " interleaved two messages (", describe(key), ", ",
                describe(got), ")");
    if (h[7] == 0) continue;  // no gradient flows through this value
    std::vector<int64_t> dims(h.begin() + 11, h.begin() + 11 + h[10]);
    Tensor t =
        Tensor::empty(Shape(std::move(dims)), static_cast<DType>(h[8]), ctx.stream(), static_cast<MemoryFormat>(h[9]));
    comm.recv(t, peer, ctx.stream())->wait_on(ctx.stream());
    tensors[static_cast<size_t>(k)] = std::move(t);
  }
  BATON_CHECK(arrived_.emplace(key, std::move(tensors)).second, "pipeline position ", from, " sent ", describe(key),
              " twice");
}

std::vector<Tensor> RemoteTransfers::receive(const MailboxKey& key, Context& ctx) {
  const int from = position_of_(key.from);
  while (!arrived_.contains(key)) take_next(from, ctx);
  auto node = arrived_.extract(key);
  return std::move(node.mapped());
}

void RemoteTransfers::finish() {
  for (const InFlight& send : sends_) send.work->wait();
  sends_.clear();
}

}  // namespace baton::parallel
