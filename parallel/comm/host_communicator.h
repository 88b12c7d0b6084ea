// HostCommunicator: what the host backends (inproc, mpi) share: rank, size and backend name, the
// timeout, the numbering of collectives and of each peer's sends and receives, and the
// descriptions that their messages use ("all_reduce #3 on rank 1 of 4 (mpi)").
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/comm/collective_args.h"
#include "parallel/comm/communicator.h"

namespace baton::comm {

class HostCommunicator : public Communicator {
 public:
  HostCommunicator(std::string_view backend, int rank, int size, std::chrono::milliseconds timeout);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend() const override { return backend_; }
  void set_timeout(std::chrono::milliseconds timeout) override;

 protected:
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(timeout_ms_.load()); }
  std::string describe(OpKind kind, uint64_t seq) const;
  // The description of the collective issued next (for argument checks), and its number, taken.
  std::string describe_next(OpKind kind) const { return describe(kind, next_collective_); }
  uint64_t take_collective_number() { return next_collective_++; }

  // The arguments of the next collective, checked (host tensors, reducible dtypes, sizes, root);
  // each returns its description.
  std::string check_all_reduce(const Tensor& buffer, ReduceOp op) const;
  std::string check_broadcast(const Tensor& buffer, int root) const;
  std::string check_all_gather(const Tensor& input, const Tensor& output) const;
  std::string check_reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op) const;

  // A send or recv, checked (peer, host tensor) and numbered among those to or from the peer.
  struct PointToPoint {
    uint64_t seq = 0;
    std::string what;  // "send #2 to rank 1 on rank 0 of 2 (mpi)"
  };
  PointToPoint number_send(const Tensor& tensor, int peer) { return number(OpKind::send, tensor, peer); }
  PointToPoint number_recv(const Tensor& tensor, int peer) { return number(OpKind::recv, tensor, peer); }

 private:
  PointToPoint number(OpKind kind, const Tensor& tensor, int peer);

  const std::string backend_;
  const int rank_;
  const int size_;
  std::atomic<int64_t> timeout_ms_;
  // Issue counters: a communicator is used from one thread at a time.
  uint64_t next_collective_ = 0;
  std::vector<uint64_t> next_send_;  // per peer
  std::vector<uint64_t> next_recv_;
};

}  // namespace baton::comm
