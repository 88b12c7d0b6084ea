// Gradient buckets: the parameters grouped, in the order their gradients become final in backward,
// into buckets of a bounded size, each all-reduced as one message (PyTorch DDP's assignment: a
// small first bucket, then a larger cap). A ParamStore laid out by the plan holds each bucket as one
// contiguous range of its flat gradient buffer, so a bucket is a view and reducing it copies nothing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/graph/param_store.h"

namespace baton::parallel {

struct BucketOptions {
  size_t first_bucket_bytes = size_t{1} << 20;  // the gradients that become final first
  size_t bucket_bytes = size_t{25} << 20;       // every later bucket
};

struct BucketPlan {
  // Parameter names, bucket 0 first (the first to be reduced); each bucket in ready order.
  std::vector<std::vector<std::string>> buckets;

  ParamLayout layout() const { return {buckets}; }
};

// The parameters of an executor over `nodes` (sorted as the executor sorts them: the graph's
// topological order) in the order its backward makes their gradients final: nodes last to first,
// each node's parameters together.
std::vector<ParamEntry> backward_ready_order(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype);

// Walks `ready_order` and closes a bucket once it holds at least the current cap (the first bucket's,
// then `bucket_bytes`) of padded parameter bytes; a parameter larger than the cap gets a bucket of its
// own. Parameters of one node never straddle two buckets (they become final together).
BucketPlan plan_buckets(const std::vector<ParamEntry>& ready_order, DType dtype, const BucketOptions& options = {});

}  // namespace baton::parallel
