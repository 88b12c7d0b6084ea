// ReplicaSync: one replica's gradient all-reduce of a step, by buckets or as one partition.
#include "parallel/replicas/replica_sync.h"

#include <exception>
#include <utility>

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

ReplicaSync::ReplicaSync(Executor& executor, ParamStore& params, Context& ctx, comm::Communicator& comm,
                         GradSyncStrategy strategy, const GradientSyncOptions& options, const GradientBuckets* buckets,
                         std::string what)
    : executor_(executor), params_(params), ctx_(ctx), comm_(comm), reduce_(options.reduce), what_(std::move(what)) {
  if (strategy != GradSyncStrategy::bucket) return;
  BATON_CHECK(buckets != nullptr, what_, ": the bucket strategy needs the stage's buckets");
  buckets_ = std::make_unique<GradientSync>(*buckets, comm, ctx.stream(), options);
  for (size_t b = 0; b < buckets->size(); ++b) buckets_bytes_.push_back(buckets->bytes(b));
  executor.set_grad_ready_hook([this](const ParamEntry& entry, bool reached) { buckets_->mark_ready(entry, reached); });
}

ReplicaSync::~ReplicaSync() {
  executor_.set_grad_ready_hook({});
  if (finished_ || !whole_) return;  // a GradientSync waits for its own buckets
  try {
    whole_->wait();
  } catch (const std::exception& e) {
    log_warn(what_, ": gradient all-reduce after a failed step: ", e.what());
  }
}

void ReplicaSync::all_reduce() {
  if (buckets_) return;  // every bucket was issued as backward made it final
  BATON_CHECK(!whole_, what_, ": all_reduce issued twice in one step");
  whole_ = comm_.all_reduce(params_.grads_flat(), reduce_, ctx_.stream());
}

void ReplicaSync::finish() {
  finished_ = true;
  if (buckets_) return buckets_->finish();
  BATON_CHECK(whole_, what_, ": optimizer_step before the stage's all_reduce");
  whole_->wait_on(ctx_.stream());
}

std::vector<ReplicaSync::Collective> ReplicaSync::collectives() const {
  std::vector<Collective> out;
  if (buckets_) {
    const std::vector<BucketTiming>& timings = buckets_->timings();
    for (size_t b = 0; b < timings.size(); ++b) out.push_back({buckets_bytes_[b], timings[b].ran});
  } else if (whole_) {
    out.push_back({params_.grads_flat().nbytes(), whole_->times()});
  }
  return out;
}

}  // namespace baton::parallel
