// One replica's gradient buckets and one step's in-order, overlapped all-reduce of them.
#include "parallel/replicas/gradient_sync.h"

#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/core/log.h"

namespace baton::parallel {

GradientBuckets::GradientBuckets(const ParamStore& params)
    : params_(params), ranges_(params.block_ranges()), params_in_(ranges_.size(), 0) {
  for (const ParamEntry& e : params.params()) ++params_in_[bucket_of(e)];
}

Tensor GradientBuckets::view(size_t b) const { return params_.grads_flat().slice(ranges_[b].first, ranges_[b].second); }

size_t GradientBuckets::bucket_of(const ParamEntry& entry) const {
  const auto it = std::upper_bound(ranges_.begin(), ranges_.end(), entry.offset,
                                   [](int64_t offset, const auto& range) { return offset < range.second; });
  BATON_CHECK(it != ranges_.end() && entry.offset >= it->first, "gradient buckets: parameter '", entry.name,
              "' lies in no bucket");
  return static_cast<size_t>(it - ranges_.begin());
}

size_t GradientBuckets::bytes(size_t b) const {
  return static_cast<size_t>(ranges_[b].second - ranges_[b].first) * dtype_size(params_.dtype());
}

GradientSync::GradientSync(const GradientBuckets& buckets, comm::Communicator& comm, const Stream& compute,
                           GradientSyncOptions options)
    : buckets_(buckets),
      comm_(comm),
      compute_(compute),
      options_(options),
      pending_(buckets.size()),
      works_(buckets.size()),
      timings_(buckets.size()) {
  for (size_t b = 0; b < buckets.size(); ++b) pending_[b] = buckets.params_in(b);
  // A bucket of no parameters (an empty store) is ready at once.
  launch_ready_buckets();
}

GradientSync::~GradientSync() {
  if (finished_) return;
  for (const comm::WorkHandle& work : works_) {
    if (!work) continue;
    try {
      work->wait();
    } catch (const std::exception& e) {
      log_warn("gradient all-reduce after a failed step: ", e.what());
    }
  }
}

void GradientSync::mark_ready(const ParamEntry& entry, bool reached) {
  const size_t b = buckets_.bucket_of(entry);
  BATON_CHECK(pending_[b] > 0, "gradient sync: parameter '", entry.name, "' was marked ready twice in one step");
  ready_order_.push_back(entry.name);
  if (!reached) unreached_.push_back(entry.name);
  --pending_[b];
  launch_ready_buckets();
}

void GradientSync::launch_ready_buckets() {
  while (next_ < buckets_.size() && pending_[next_] == 0) {
    timings_[next_].issued = std::chrono::steady_clock::now();
    works_[next_] = comm_.all_reduce(buckets_.view(next_), options_.reduce, compute_);
    ++next_;
  }
}

void GradientSync::finish() {
  backward_end_ = std::chrono::steady_clock::now();
  finished_ = true;
  std::vector<std::string> never;
  for (size_t b = next_; b < buckets_.size(); ++b) {
    if (pending_[b] > 0) never.push_back("bucket " + std::to_string(b));
  }
  for (size_t b = 0; b < next_; ++b) {
    works_[b]->wait_on(compute_);
    timings_[b].ran = works_[b]->times();
  }
  BATON_CHECK(never.empty(), "gradient sync: ", never.size(), " bucket(s) never became ready (the first is ",
              never.front(), "): backward did not mark every parameter ready");
  if (!unreached_.empty() && !options_.unused_parameters_ready) {
    std::string more = unreached_.size() > 1 ? " (and " + std::to_string(unreached_.size() - 1) + " more)" : "";
    BATON_FAIL("data parallel: parameter '", unreached_.front(), "'", more,
               " received no gradient in this step (the loss does not depend on it); every replica must reduce "
               "the same gradients: remove it from the model, or treat unused parameters as ready "
               "(--unused-parameters ready) to reduce zeros for them");
  }
}

}  // namespace baton::parallel
