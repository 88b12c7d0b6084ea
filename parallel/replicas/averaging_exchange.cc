// The averaging exchange: ring and node-shaped tree all-reduce of a flat buffer on send/recv.
#include "parallel/replicas/averaging_exchange.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <functional>
#include <string>

#include "kernels/elementwise.h"
#include "runtime/core/error.h"

namespace baton::parallel {

namespace {

// Chunk i of n of a buffer of m elements: [i m / n, (i + 1) m / n).
Tensor chunk(const Tensor& buffer, int i, int n) {
  const int64_t m = buffer.numel();
  return buffer.slice(i * m / n, (i + 1) * m / n);
}

}  // namespace

std::vector<int> nodes_by_host(comm::Communicator& comm) {
  std::array<char, 256> name{};
  BATON_CHECK(gethostname(name.data(), name.size() - 1) == 0, "model averaging: gethostname failed");
  const auto mine = static_cast<int64_t>(std::hash<std::string>{}(std::string(name.data())));
  const Stream stream = Stream::create(comm.device());
  const Tensor input = Tensor::from_vector<int64_t>({mine}, Shape{1}, stream);
  const Tensor all = Tensor::empty(Shape{comm.size()}, DType::i64, stream);
  comm.all_gather(input, all, stream)->wait();
  const std::vector<int64_t> hashes = all.to(Device::cpu(), stream).to_vector<int64_t>(stream);
  std::vector<int> nodes;
  for (size_t r = 0; r < hashes.size(); ++r) {
    nodes.push_back(static_cast<int>(std::find(hashes.begin(), hashes.end(), hashes[r]) - hashes.begin()));
  }
  return nodes;
}

AveragingExchange::AveragingExchange(comm::Communicator& comm, ExchangeKind kind, const std::vector<int>& nodes)
    : comm_(comm), kind_(kind) {
  if (kind != ExchangeKind::tree) return;
  const std::vector<int> node_of = nodes.empty() ? nodes_by_host(comm) : nodes;
  BATON_CHECK(static_cast<int>(node_of.size()) == comm.size(), "averaging exchange: ", node_of.size(),
              " node numbers for ", comm.size(), " ranks");
  for (int n : node_of) BATON_CHECK(n >= 0, "averaging exchange: node number ", n, " (expected 0 or more)");
  std::vector<int> distinct = node_of;
  std::sort(distinct.begin(), distinct.end());
  nodes_ = static_cast<int>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  node_ = comm.split(node_of[static_cast<size_t>(comm.rank())], comm.rank());
  leaders_ = comm.split(node_->rank() == 0 ? 0 : -1, comm.rank());
}

AveragingExchange::~AveragingExchange() = default;

int AveragingExchange::ranks_in_node() const { return node_ ? node_->size() : comm_.size(); }

comm::WorkHandle AveragingExchange::send(comm::Communicator& c, const Tensor& t, int peer, Context& ctx) {
  bytes_sent_ += static_cast<int64_t>(t.nbytes());
  return c.send(t, peer, ctx.stream());
}

void AveragingExchange::all_reduce(Context& ctx, const Tensor& buffer, comm::ReduceOp op) {
  BATON_CHECK(buffer.dtype() == DType::f32 || buffer.dtype() == DType::f64, "averaging exchange: a ",
              dtype_name(buffer.dtype()), " buffer (expected f32 or f64)");
  const int n = comm_.size();
  if (n == 1) return;
  const double mean = op == comm::ReduceOp::mean ? 1.0 / n : 1.0;
  if (kind_ == ExchangeKind::ring) {
    const Tensor scratch = Tensor::empty(Shape{(buffer.numel() + n - 1) / n}, buffer.dtype(), ctx);
    ring_sum(ctx, comm_, buffer, scratch);
    if (mean != 1.0) kernels::scale(ctx, buffer, mean, buffer);  // the same chunks' bits on every rank
    return;
  }
  const Tensor scratch = Tensor::empty(Shape{buffer.numel()}, buffer.dtype(), ctx);
  tree_reduce(ctx, *node_, buffer, scratch);
  if (leaders_) {
    ring_sum(ctx, *leaders_, buffer, scratch);
    if (mean != 1.0) kernels::scale(ctx, buffer, mean, buffer);
  }
  tree_broadcast(ctx, *node_, buffer);
}

void AveragingExchange::ring_sum(Context& ctx, comm::Communicator& c, const Tensor& buffer, const Tensor& scratch) {
  const int n = c.size(), r = c.rank();
  if (n == 1) return;
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  auto step = [&](int send_chunk, int recv_chunk, bool add) {
    const Tensor out = chunk(buffer, send_chunk, n), into = chunk(buffer, recv_chunk, n);
    const Tensor landing = add ? scratch.slice(0, into.numel()) : into;
    // An empty chunk (fewer elements than ranks) travels on neither side: both know its size.
    const comm::WorkHandle sent = out.numel() > 0 ? send(c, out, next, ctx) : nullptr;
    const comm::WorkHandle received = into.numel() > 0 ? c.recv(landing, prev, ctx.stream()) : nullptr;
    if (sent) sent->wait_on(ctx.stream());
    if (!received) return;
    received->wait_on(ctx.stream());
    if (add) kernels::add(ctx, into, landing, into);
  };
  // Reduce-scatter: after n - 1 steps rank r holds the sum of chunk r + 1; then all-gather.
  for (int s = 0; s < n - 1; ++s) step((r - s + n) % n, (r - s - 1 + 2 * n) % n, /*add=*/true);
  for (int s = 0; s < n - 1; ++s) step((r + 1 - s + n) % n, (r - s + n) % n, /*add=*/false);
}

void AveragingExchange::tree_reduce(Context& ctx, comm::Communicator& c, const Tensor& buffer, const Tensor& scratch) {
  const int k = c.size(), l = c.rank();
  for (int d = 1; d < k; d *= 2) {
    if (l % (2 * d) == d) {
      send(c, buffer, l - d, ctx)->wait_on(ctx.stream());
      return;  // this rank's part is in; it waits for the broadcast
    }
    if (l % (2 * d) == 0 && l + d < k) {
      c.recv(scratch, l + d, ctx.stream())->wait_on(ctx.stream());
      kernels::add(ctx, buffer, scratch, buffer);
    }
  }
}

void AveragingExchange::tree_broadcast(Context& ctx, comm::Communicator& c, const Tensor& buffer) {
  const int k = c.size(), l = c.rank();
  int top = 1;
  while (top * 2 < k) top *= 2;
  for (int d = top; d >= 1 && k > 1; d /= 2) {
    if (l % (2 * d) == d) c.recv(buffer, l - d, ctx.stream())->wait_on(ctx.stream());
    if (l % (2 * d) == 0 && l + d < k) send(c, buffer, l + d, ctx)->wait_on(ctx.stream());
  }
}

}  // namespace baton::parallel
