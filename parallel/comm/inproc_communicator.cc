// InprocCommunicator: one rank of an InprocGroup, issuing its operations to its own communication thread.
#include "parallel/comm/inproc_communicator.h"

#include <cstring>

#include "parallel/comm/host_communicator.h"
#include "parallel/comm/inproc_group.h"
#include "parallel/comm/op_thread.h"
#include "parallel/comm/reduce_kernel.h"

namespace baton::comm {
namespace {

const std::byte* bytes_at(const void* base, int64_t elements, DType dtype) {
  return static_cast<const std::byte*>(base) + elements * static_cast<int64_t>(dtype_size(dtype));
}
std::byte* bytes_at(void* base, int64_t elements, DType dtype) {
  return static_cast<std::byte*>(base) + elements * static_cast<int64_t>(dtype_size(dtype));
}

class InprocCommunicator final : public HostCommunicator {
 public:
  InprocCommunicator(std::shared_ptr<InprocGroup> group, int rank, std::chrono::milliseconds timeout)
      : HostCommunicator("inproc", rank, group->size(), timeout), group_(std::move(group)) {}

  WorkHandle all_reduce(const Tensor& buffer, ReduceOp op, const Stream& stream) override {
    check_all_reduce(buffer, op);
    Contribution mine = contribution(OpKind::all_reduce, buffer, buffer.data_ptr());
    mine.op = op;
    return collective(mine, {buffer}, StreamReady(stream), [rank = rank(), op](const std::vector<Contribution>& all) {
      const Contribution& c0 = all[0];
      const ElementRange range = chunk_range(c0.shape.numel(), static_cast<int>(all.size()), rank);
      std::vector<const void*> sources;
      std::vector<void*> dests;
      for (const Contribution& c : all) {
        sources.push_back(bytes_at(c.input, range.begin, c0.dtype));
        dests.push_back(bytes_at(c.output, range.begin, c0.dtype));
      }
      reduce_in_order(c0.dtype, op, static_cast<int>(all.size()), sources, dests, range.count);
    });
  }

  WorkHandle broadcast(const Tensor& buffer, int root, const Stream& stream) override {
    check_broadcast(buffer, root);
    Contribution mine = contribution(OpKind::broadcast, buffer, buffer.data_ptr());
    mine.root = root;
    return collective(mine, {buffer}, StreamReady(stream), [rank = rank(), root](const std::vector<Contribution>& all) {
      const Contribution& src = all[static_cast<size_t>(root)];
      const ElementRange range = chunk_range(src.shape.numel(), static_cast<int>(all.size()), rank);
      const size_t bytes = static_cast<size_t>(range.count) * dtype_size(src.dtype);
      for (size_t k = 0; k < all.size(); ++k) {
        if (static_cast<int>(k) == root || bytes == 0) continue;
        std::memcpy(bytes_at(all[k].output, range.begin, src.dtype), bytes_at(src.input, range.begin, src.dtype),
                    bytes);
      }
    });
  }

  WorkHandle all_gather(const Tensor& input, const Tensor& output, const Stream& stream) override {
    check_all_gather(input, output);
    const Contribution mine = contribution(OpKind::all_gather, input, output.data_ptr());
    return collective(mine, {input, output}, StreamReady(stream),
                      [rank = rank()](const std::vector<Contribution>& all) {
                        const Contribution& me = all[static_cast<size_t>(rank)];
                        const int64_t n = me.shape.numel();
                        const size_t bytes = static_cast<size_t>(n) * dtype_size(me.dtype);
                        if (bytes == 0) return;
                        for (const Contribution& c : all)
                          std::memmove(bytes_at(c.output, rank * n, me.dtype), me.input, bytes);
                      });
  }

  WorkHandle reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op, const Stream& stream) override {
    check_reduce_scatter(input, output, op);
    Contribution mine = contribution(OpKind::reduce_scatter, input, output.data_ptr());
    mine.op = op;
    return collective(mine, {input, output}, StreamReady(stream),
                      [rank = rank(), op](const std::vector<Contribution>& all) {
                        const Contribution& me = all[static_cast<size_t>(rank)];
                        const int64_t m = me.shape.numel() / static_cast<int64_t>(all.size());
                        std::vector<const void*> sources;
                        for (const Contribution& c : all) sources.push_back(bytes_at(c.input, rank * m, me.dtype));
                        void* const dest = me.output;
                        reduce_in_order(me.dtype, op, static_cast<int>(all.size()), sources, {&dest, 1}, m);
                      });
  }

  WorkHandle send(const Tensor& tensor, int peer, const Stream& stream) override {
    const PointToPoint numbered = number_send(tensor, peer);
    const uint64_t seq = numbered.seq;  // a plain variable: clang 14 cannot capture a structured binding
    const std::string& what = numbered.what;
    auto work = std::make_shared<PendingWork>(
        what, timeout(), [group = group_, from = rank(), to = peer, seq](const PendingWork& w) {
          if (w.done()) return;
          const std::string reason = detail::concat(w.description(), " was not received within ", w.timeout().count(),
                                                    " ms: ", group->describe_send(from, to, seq));
          group->abort(reason);
          throw Error(reason);
        });
    thread_.post([group = group_, from = rank(), peer, seq, tensor, work, ready = StreamReady(stream)] {
      try {
        ready.wait();
        group->post_send(from, peer, seq, tensor, work);  // the receiver completes it
      } catch (const Error& e) {
        work->fail(e);
      }
    });
    return work;
  }

  WorkHandle recv(const Tensor& tensor, int peer, const Stream& stream) override {
    const PointToPoint numbered = number_recv(tensor, peer);
    const uint64_t seq = numbered.seq;
    auto work = make_work(numbered.what);
    thread_.post(
        [group = group_, to = rank(), peer, seq, tensor, work, timeout = timeout(), ready = StreamReady(stream)] {
          run_and_report(*work, [&] {
            ready.wait();
            group->receive(peer, to, seq, tensor, timeout);
          });
        });
    return work;
  }

  void barrier() override {
    Contribution mine;
    mine.kind = OpKind::barrier;
    collective(mine, {}, StreamReady(), [](const std::vector<Contribution>&) {})->wait();
  }

  bool abort_in_process(const std::string& reason) override {
    group_->abort(reason);
    return true;
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    const uint64_t seq = take_collective_number();
    auto work = make_work(describe(OpKind::split, seq));
    auto result = std::make_shared<SplitResult>();
    thread_.post([group = group_, rank = rank(), seq, color, key, result, work, timeout = timeout()] {
      run_and_report(*work, [&] { *result = group->split(rank, seq, color, key, timeout); });
    });
    work->wait();
    if (!result->group) return nullptr;
    return std::make_unique<InprocCommunicator>(result->group, result->rank, timeout());
  }

 private:
  static Contribution contribution(OpKind kind, const Tensor& input, void* output) {
    Contribution c;
    c.kind = kind;
    c.dtype = input.dtype();
    c.shape = input.shape();
    c.input = input.data_ptr();
    c.output = output;
    return c;
  }

  // Runs `body`, completing `work`, or failing it with the baton::Error `body` throws.
  template <typename Body>
  static void run_and_report(PendingWork& work, Body&& body) {
    work.start();
    try {
      body();
      work.complete();
    } catch (const Error& e) {
      work.fail(e);
    } catch (const std::exception& e) {
      work.fail(Error(work.description() + ": " + e.what()));
    }
  }

  // A Work whose timed-out wait() aborts the group, naming what this rank waits for.
  std::shared_ptr<PendingWork> make_work(std::string description) const {
    return std::make_shared<PendingWork>(
        std::move(description), timeout(), [group = group_, rank = rank()](const PendingWork& w) {
          if (w.done()) return;
          const std::string reason = detail::concat(w.description(), " did not complete within ", w.timeout().count(),
                                                    " ms: ", group->describe_wait(rank));
          group->abort(reason);
          throw Error(reason);
        });
  }

  // Queues the next collective; `keep` holds the tensors alive until it has run.
  WorkHandle collective(const Contribution& mine, std::vector<Tensor> keep, StreamReady ready, InprocGroup::Part part) {
    const uint64_t seq = take_collective_number();
    auto work = make_work(describe(mine.kind, seq));
    thread_.post([group = group_, rank = rank(), seq, mine, keep = std::move(keep), part = std::move(part), work,
                  timeout = timeout(), ready = std::move(ready)] {
      run_and_report(*work, [&] {
        ready.wait();
        group->run_collective(rank, seq, mine, timeout, part);
      });
    });
    return work;
  }

  const std::shared_ptr<InprocGroup> group_;
  OpThread thread_;  // last: joined first, while the members above still exist
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_inproc_communicators(int size) {
  BATON_CHECK(size >= 1, "make_inproc_communicators: size must be at least 1, not ", size);
  auto group = std::make_shared<InprocGroup>(size);
  const std::chrono::milliseconds timeout = default_timeout();
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < size; ++r) comms.push_back(std::make_unique<InprocCommunicator>(group, r, timeout));
  return comms;
}

}  // namespace baton::comm
