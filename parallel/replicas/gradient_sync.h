// Gradient synchronisation of one data-parallel replica: its buckets (GradientBuckets, built once)
// and one step's all-reduce (GradientSync, a per-step object fed by the executor's grad-ready hook).
//
// A bucket's all-reduce starts the moment its last gradient is final, while backward goes on with
// the gradients of earlier layers; buckets start strictly in bucket order (a bucket that completes
// early waits for the ones before it), so every rank issues the same collectives in the same order.
// The all-reduce takes the mean over the replicas, once. finish() waits for every bucket, so the
// optimiser that follows on the compute stream sees the reduced gradients.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "parallel/comm/communicator.h"
#include "parallel/replicas/bucket_plan.h"
#include "runtime/graph/param_store.h"

namespace baton::parallel {

// The buckets of a ParamStore laid out by a BucketPlan: bucket b is block b of the store's layout.
class GradientBuckets {
 public:
  explicit GradientBuckets(const ParamStore& params);

  size_t size() const { return ranges_.size(); }
  // Bucket b's slice of the flat gradient buffer.
  Tensor view(size_t b) const;
  size_t bucket_of(const ParamEntry& entry) const;
  int params_in(size_t b) const { return params_in_[b]; }
  size_t bytes(size_t b) const;

 private:
  const ParamStore& params_;
  std::vector<std::pair<int64_t, int64_t>> ranges_;
  std::vector<int> params_in_;
};

struct GradientSyncOptions {
  // A parameter no gradient reached in the step is reduced as zeros (true) or is an error naming it.
  bool unused_parameters_ready = false;
  // mean: replicas whose gradients each cover the whole batch's scale (data parallel, hybrid groups);
  // sum: replicas that each took some of the step's micro-batches at the batch's loss scale (the
  // replicas of one pipeline stage under unequal replication).
  comm::ReduceOp reduce = comm::ReduceOp::mean;
};

// One bucket's all-reduce: when backward issued it, and when the communicator ran it (from its
// thread taking it up to completion; unset when the backend does not record it).
struct BucketTiming {
  std::chrono::steady_clock::time_point issued;
  comm::WorkTimes ran;
};

// One step of one replica; create it before backward and call mark_ready from the grad-ready hook.
class GradientSync {
 public:
  GradientSync(const GradientBuckets& buckets, comm::Communicator& comm, const Stream& compute,
               GradientSyncOptions options = {});
  // Waits for what was issued if finish() was not reached (an exception in backward).
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  void mark_ready(const ParamEntry& entry, bool reached);
  // Call when backward has returned: waits for every bucket (ordering the compute stream after them);
  // throws when a parameter was never marked ready, when one no gradient reached is not allowed, or
  // when a collective failed.
  void finish();

  const std::vector<BucketTiming>& timings() const { return timings_; }
  // When finish() was called: the end of backward.
  std::chrono::steady_clock::time_point backward_end() const { return backward_end_; }
  // The parameter names in the order they were marked ready.
  const std::vector<std::string>& ready_order() const { return ready_order_; }

 private:
  void launch_ready_buckets();

  const GradientBuckets& buckets_;
  comm::Communicator& comm_;
  Stream compute_;
  GradientSyncOptions options_;
  std::vector<int> pending_;  // per bucket: parameters not yet ready
  size_t next_ = 0;           // the next bucket to issue
  std::vector<comm::WorkHandle> works_;
  std::vector<BucketTiming> timings_;
  std::vector<std::string> ready_order_, unreached_;
  std::chrono::steady_clock::time_point backward_end_;
  bool finished_ = false;
};

}  // namespace baton::parallel
