// StageSync: one stage's gradient all-reduce across the groups, by buckets or as one partition.
#include "parallel/pipeline/stage_sync.h"

#include <exception>

#include "runtime/core/error.h"
#include "runtime/core/log.h"

namespace baton::parallel {

std::string_view grad_sync_name(GradSyncStrategy strategy) {
  return strategy == GradSyncStrategy::bucket ? "bucket" : "partition";
}

GradSyncStrategy parse_grad_sync(std::string_view name) {
  if (name == "bucket") return GradSyncStrategy::bucket;
  if (name == "partition") return GradSyncStrategy::partition;
  BATON_FAIL("unknown gradient synchronisation '", name, "' (expected bucket or partition)");
}

ParamLayout stage_layout(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype, const GroupSync& sync) {
  if (!sync.active() || sync.strategy != GradSyncStrategy::bucket) return {};
  return plan_buckets(backward_ready_order(graph, nodes, dtype), dtype, sync.buckets).layout();
}

StageSync::StageSync(PipelineStage& stage, comm::Communicator& comm, const GroupSync& sync,
                     const GradientBuckets* buckets)
    : stage_(stage), comm_(comm), reduce_(sync.options.reduce) {
  if (sync.strategy != GradSyncStrategy::bucket) return;
  BATON_CHECK(buckets != nullptr, "pipeline stage ", stage.index(), ": the bucket strategy needs the stage's buckets");
  buckets_ = std::make_unique<GradientSync>(*buckets, comm, stage.context().stream(), sync.options);
  for (size_t b = 0; b < buckets->size(); ++b) buckets_bytes_.push_back(buckets->bytes(b));
  stage.executor().set_grad_ready_hook(
      [this](const ParamEntry& entry, bool reached) { buckets_->mark_ready(entry, reached); });
}

StageSync::~StageSync() {
  stage_.executor().set_grad_ready_hook({});
  if (finished_ || !whole_) return;  // a GradientSync waits for its own buckets
  try {
    whole_->wait();
  } catch (const std::exception& e) {
    log_warn("pipeline stage ", stage_.index(), ": gradient all-reduce after a failed step: ", e.what());
  }
}

void StageSync::all_reduce() {
  if (buckets_) return;  // every bucket was issued as backward made it final
  BATON_CHECK(!whole_, "pipeline stage ", stage_.index(), ": all_reduce issued twice in one step");
  whole_ = comm_.all_reduce(stage_.params().grads_flat(), reduce_, stage_.context().stream());
}

void StageSync::finish() {
  finished_ = true;
  if (buckets_) return buckets_->finish();
  BATON_CHECK(whole_, "pipeline stage ", stage_.index(), ": optimizer_step before the stage's all_reduce");
  whole_->wait_on(stage_.context().stream());
}

std::vector<StageSync::Collective> StageSync::collectives() const {
  std::vector<Collective> out;
  if (buckets_) {
    const std::vector<BucketTiming>& timings = buckets_->timings();
    for (size_t b = 0; b < timings.size(); ++b) out.push_back({buckets_bytes_[b], timings[b].ran});
  } else if (whole_) {
    out.push_back({stage_.params().grads_flat().nbytes(), whole_->times()});
  }
  return out;
}

}  // namespace baton::parallel
