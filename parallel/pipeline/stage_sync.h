// Gradient synchronisation of pipeline stages across data-parallel groups (the hybrid: G groups
// each running the whole pipeline; stage s of every group forms one communicator). The two
// strategies, the settings a PipelineExecutor keeps, and StageSync, one step of one stage.
// See docs/hybrid.md.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "parallel/comm/communicator.h"
#include "parallel/pipeline/stage.h"
#include "parallel/replicas/bucket_plan.h"
#include "parallel/replicas/gradient_sync.h"

namespace baton::parallel {

enum class GradSyncStrategy {
  bucket,     // the data-parallel reducer per stage: each bucket all-reduced as soon as it is final
  partition,  // GroPipe's delayed communication: the stage's whole gradient in one all-reduce,
              // issued by the schedule's all_reduce instruction after the stage's last backward
};
std::string_view grad_sync_name(GradSyncStrategy strategy);  // "bucket", "partition"
GradSyncStrategy parse_grad_sync(std::string_view name);     // errors list the valid names

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

// One training step of one stage: its all-reduces across the groups. Created before the step runs,
// touched only by the worker of the stage's pipeline position.
class StageSync {
 public:
  // Bucket strategy: hooks the stage executor's grad-ready (it fires during the last micro-batch's
  // backward), so that each bucket's all-reduce starts the moment its gradients are final.
  // `buckets`: the stage store's buckets (bucket strategy only).
  StageSync(PipelineStage& stage, comm::Communicator& comm, const GroupSync& sync, const GradientBuckets* buckets);
  // Unhooks; waits for collectives still in flight after a failed step.
  ~StageSync();
  StageSync(const StageSync&) = delete;
  StageSync& operator=(const StageSync&) = delete;

  // The schedule's all_reduce instruction (after the stage's last backward): the partition strategy
  // issues the stage's whole flat gradient as one all-reduce (sync.options.reduce: the mean over the
  // groups, or the sum over a stage's replicas); under the
  // bucket strategy every bucket has been issued by then.
  void all_reduce();
  // Before the stage's optimiser: orders its compute stream after every all-reduce of the stage;
  // throws when one failed (or, bucket strategy, a parameter received no gradient).
  void finish();

  // After finish(): each all-reduce of the step (one per bucket, or the one partition), in issue
  // order, with its bytes and when the communicator ran it.
  struct Collective {
    size_t bytes = 0;
    comm::WorkTimes ran;
  };
  std::vector<Collective> collectives() const;

 private:
  PipelineStage& stage_;
  comm::Communicator& comm_;
  comm::ReduceOp reduce_;                  // mean over groups, sum over a stage's replicas
  std::unique_ptr<GradientSync> buckets_;  // bucket strategy
  std::vector<size_t> buckets_bytes_;
  comm::WorkHandle whole_;  // partition strategy
  bool finished_ = false;
};

}  // namespace baton::parallel
