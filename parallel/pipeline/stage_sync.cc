// StageSync: one stage's gradient all-reduce across the groups, by buckets or as one partition.
#include "parallel/pipeline/stage_sync.h"

#include <string>

namespace baton::parallel {

ParamLayout stage_layout(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype, const GroupSync& sync) {
  if (!sync.active() || sync.strategy != GradSyncStrategy::bucket) return {};
  return plan_buckets(backward_ready_order(graph, nodes, dtype), dtype, sync.buckets).layout();
}

StageSync::StageSync(PipelineStage& stage, comm::Communicator& comm, const GroupSync& sync,
                     const GradientBuckets* buckets)
    : ReplicaSync(stage.executor(), stage.params(), stage.context(), comm, sync.strategy, sync.options, buckets,
                  "pipeline stage " + std::to_string(stage.index())) {}

}  // namespace baton::parallel
