// Gradient buckets from the order in which backward makes gradients final.
#include "parallel/replicas/bucket_plan.h"

#include <algorithm>
#include <unordered_map>

#include "runtime/core/error.h"

namespace baton::parallel {

std::vector<ParamEntry> backward_ready_order(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype) {
  const std::vector<ParamEntry> entries = ParamStore::describe(graph, nodes, dtype);
  std::unordered_map<NodeId, size_t> position;
  const std::vector<NodeId> order = graph.topological_order();
  for (size_t i = 0; i < order.size(); ++i) position.emplace(order[i], i);
  std::vector<ParamEntry> ready = entries;
  std::stable_sort(ready.begin(), ready.end(), [&](const ParamEntry& a, const ParamEntry& b) {
    if (a.node != b.node) return position.at(a.node) > position.at(b.node);
    return a.index < b.index;
  });
  return ready;
}

BucketPlan plan_buckets(const std::vector<ParamEntry>& ready_order, DType dtype, const BucketOptions& options) {
  BATON_CHECK(options.first_bucket_bytes > 0 && options.bucket_bytes > 0,
              "gradient buckets: the bucket sizes must be positive (first ", options.first_bucket_bytes, ", then ",
              options.bucket_bytes, " bytes)");
  const auto align = static_cast<int64_t>(64 / dtype_size(dtype));
  BucketPlan plan;
  size_t bytes = 0;
  NodeId open_node = -1;
  for (const ParamEntry& e : ready_order) {
    const size_t cap = plan.buckets.size() <= 1 ? options.first_bucket_bytes : options.bucket_bytes;
    // Close the open bucket when it is full, unless this parameter belongs to the node already in it.
    if (plan.buckets.empty() || (bytes >= cap && e.node != open_node)) {
      plan.buckets.emplace_back();
      bytes = 0;
    }
    plan.buckets.back().push_back(e.name);
    bytes += static_cast<size_t>((e.shape.numel() + align - 1) / align * align) * dtype_size(dtype);
    open_node = e.node;
  }
  return plan;
}

}  // namespace baton::parallel
