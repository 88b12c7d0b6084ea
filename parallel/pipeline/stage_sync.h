// Gradient synchronisation of pipeline stages across data-parallel groups (the hybrid: G groups
// each running the whole pipeline; stage s of every group forms one communicator): the settings a
// PipelineExecutor keeps, and StageSync, one step of one stage (replicas/replica_sync.h).
// See docs/hybrid.md.
#pragma once

#include <memory>
#include <vector>

#include "parallel/comm/communicator.h"
#include "parallel/pipeline/stage.h"
#include "parallel/replicas/bucket_plan.h"
#include "parallel/replicas/gradient_sync.h"
#include "parallel/replicas/replica_sync.h"

namespace baton::parallel {

// A PipelineExecutor's link to the same stages of the other groups.
struct GroupSync {
  GradSyncStrategy strategy = GradSyncStrategy::bucket;
  // Per stage: the communicator joining this group's stage with that stage of every other group
  // (its rank is the group). Empty: a single group, nothing to synchronise.
  std::vector<std::shared_ptr<comm::Communicator>> communicators;
  BucketOptions buckets;        // the bucket strategy's caps
  GradientSyncOptions options;  // unused parameters (bucket strategy; partition reduces zeros for them)

  bool active() const { return !communicators.empty(); }
};

// The parameter layout of a stage over `nodes` under `sync`: gradient buckets in backward order
// (bucket strategy), else the default layout.
ParamLayout stage_layout(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype, const GroupSync& sync);

// One training step of one stage: its all-reduces across the groups (or over a replicated stage's
// units), the ReplicaSync of the stage's executor and store under `sync`.
class StageSync : public ReplicaSync {
 public:
  // `buckets`: the stage store's buckets (bucket strategy only).
  StageSync(PipelineStage& stage, comm::Communicator& comm, const GroupSync& sync, const GradientBuckets* buckets);
};

}  // namespace baton::parallel
