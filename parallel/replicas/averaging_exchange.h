// AveragingExchange: the sum or mean over every replica of one flat buffer, for model averaging,
// built on a Communicator's send/recv: a ring all-reduce (reduce-scatter, then all-gather around
// the ranks) or a tree shaped by the nodes (reduce inside each node, ring among the node leaders,
// broadcast inside each node). docs/data-parallel.md ("The averaging exchange").
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "parallel/comm/communicator.h"
#include "parallel/replicas/model_averaging.h"
#include "runtime/core/context.h"

namespace baton::parallel {

// The node of every rank of `comm`, from each process's host name (ranks of one host are one node),
// numbered by first appearance. Collective.
std::vector<int> nodes_by_host(comm::Communicator& comm);

class AveragingExchange {
 public:
  // Collective over `comm` (every rank constructs its exchange in the same order as its other
  // collectives): the tree splits `comm` by node (`nodes[rank]`, or nodes_by_host when empty).
  // `comm` must outlive the exchange.
  AveragingExchange(comm::Communicator& comm, ExchangeKind kind, const std::vector<int>& nodes = {});
  ~AveragingExchange();
  AveragingExchange(const AveragingExchange&) = delete;
  AveragingExchange& operator=(const AveragingExchange&) = delete;

  // In place: `buffer` (contiguous, f32 or f64, on ctx's device, the same numel on every rank)
  // becomes the sum (or mean) of every rank's, the same bits on every rank. Collective; work after
  // it on ctx's stream sees the result.
  void all_reduce(Context& ctx, const Tensor& buffer, comm::ReduceOp op);

  ExchangeKind kind() const { return kind_; }
  // The tree: the nodes, and this rank's node's ranks.
  int nodes() const { return nodes_; }
  int ranks_in_node() const;
  // Bytes this rank has sent so far (payloads of its sends).
  int64_t bytes_sent() const { return bytes_sent_; }

 private:
  // Sum over `c`'s ranks by a ring (nothing for one rank); `scratch` holds a chunk.
  void ring_sum(Context& ctx, comm::Communicator& c, const Tensor& buffer, const Tensor& scratch);
  // Sum into rank 0 of `c` by a binomial tree; `scratch` holds the whole buffer.
  void tree_reduce(Context& ctx, comm::Communicator& c, const Tensor& buffer, const Tensor& scratch);
  // Rank 0's buffer to every rank of `c` by a binomial tree.
  void tree_broadcast(Context& ctx, comm::Communicator& c, const Tensor& buffer);
  comm::WorkHandle send(comm::Communicator& c, const Tensor& t, int peer, Context& ctx);

  comm::Communicator& comm_;
  ExchangeKind kind_;
  int nodes_ = 1;
  std::unique_ptr<comm::Communicator> node_, leaders_;  // the tree's: this rank's node; the leaders (or none)
  int64_t bytes_sent_ = 0;
};

}  // namespace baton::parallel
