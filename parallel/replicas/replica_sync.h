// ReplicaSync: one training step's gradient synchronisation of one replica with the other replicas
// of its model or stage (data parallelism: a replica of the whole model; the hybrid: a group's
// stage; a replicated stage: one of its units), by buckets during backward or as one partition.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/comm/communicator.h"
#include "parallel/replicas/gradient_sync.h"
#include "runtime/core/context.h"
#include "runtime/graph/executor.h"
#include "runtime/graph/param_store.h"

namespace baton::parallel {

enum class GradSyncStrategy {
  bucket,     // the data-parallel reducer: each bucket all-reduced as soon as it is final
  partition,  // GroPipe's delayed communication: the whole gradient in one all-reduce, issued by
              // all_reduce() (a pipeline schedule's all_reduce instruction after the last backward)
};
std::string_view grad_sync_name(GradSyncStrategy strategy);  // "bucket", "partition"
GradSyncStrategy parse_grad_sync(std::string_view name);     // errors list the valid names

// Created before the step's backward, touched only by the replica's worker.
class ReplicaSync {
 public:
  // Bucket strategy: hooks `executor`'s grad-ready (it fires during the last backward), so that each
  // bucket's all-reduce starts the moment its gradients are final; `buckets`: the store's buckets
  // (bucket strategy only). `what` names the replica in errors ("pipeline stage 1").
  ReplicaSync(Executor& executor, ParamStore& params, Context& ctx, comm::Communicator& comm, GradSyncStrategy strategy,
              const GradientSyncOptions& options, const GradientBuckets* buckets, std::string what);
  // Unhooks; waits for collectives still in flight after a failed step.
  ~ReplicaSync();
  ReplicaSync(const ReplicaSync&) = delete;
  ReplicaSync& operator=(const ReplicaSync&) = delete;

  // After the last backward: the partition strategy issues the whole flat gradient as one
  // all-reduce (options.reduce: the mean over the replicas, or the sum over a stage's units); under
  // the bucket strategy every bucket has been issued by then.
  void all_reduce();
  // Before the optimiser: orders the compute stream after every all-reduce of the step; throws when
  // one failed (or, bucket strategy, a parameter received no gradient).
  void finish();

  // After finish(): each all-reduce of the step (one per bucket, or the one partition), in issue
  // order, with its bytes and when the communicator ran it.
  struct Collective {
    size_t bytes = 0;
    comm::WorkTimes ran;
  };
  std::vector<Collective> collectives() const;
  // The bucket strategy's reducer (its timings and ready order); null under the partition strategy.
  const GradientSync* buckets() const { return buckets_.get(); }

 private:
  Executor& executor_;
  ParamStore& params_;
  Context& ctx_;
  comm::Communicator& comm_;
  comm::ReduceOp reduce_;
  std::string what_;
  std::unique_ptr<GradientSync> buckets_;  // bucket strategy
  std::vector<size_t> buckets_bytes_;
  comm::WorkHandle whole_;  // partition strategy
  bool finished_ = false;
};

}  // namespace baton::parallel
