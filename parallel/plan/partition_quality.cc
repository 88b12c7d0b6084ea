// Balance ratio and communication volume of any plan (the hypergraph model's view of a split).
#include "parallel/plan/partition_quality.h"

#include <algorithm>
#include <cmath>

#include "runtime/core/error.h"

namespace baton::parallel {

PartitionQuality partition_quality(const Plan& plan, const Profile& profile) {
  const int n = profile.num_nodes();
  const int stages = plan.num_stages();
  BATON_CHECK(stages >= 1, "partition_quality: the plan of '", plan.model, "' has no stages");
  std::vector<int> stage_of(n, -1);
  PartitionQuality quality;
  quality.stage_ms.assign(stages, 0.0);
  const double micro_batch = plan.micro_batch_size();
  for (int s = 0; s < stages; ++s) {
    const Stage& stage = plan.stages[s];
    const double replicas = std::max(stage.replicas, 1);  // sharing the micro-batches
    for (int v : stage.nodes) {
      BATON_CHECK(v >= 0 && v < n, "partition_quality: stage ", s, " lists node ", v, " outside [0, ", n, ")");
      stage_of[v] = s;
      quality.stage_ms[s] += (profile.fwd_ms(v, micro_batch) + profile.bwd_ms(v, micro_batch)) / replicas;
    }
  }
  for (int v = 0; v < n; ++v) {
    BATON_CHECK(stage_of[v] >= 0, "partition_quality: node '", profile.nodes[v].name, "' is in no stage");
  }
  quality.max_stage_ms = *std::max_element(quality.stage_ms.begin(), quality.stage_ms.end());
  for (double ms : quality.stage_ms) quality.mean_stage_ms += ms / stages;
  quality.balance_ratio = quality.mean_stage_ms > 0 ? quality.max_stage_ms / quality.mean_stage_ms : 1.0;

  double bytes = 0;
  std::vector<int> seen(stages, -1);
  for (int i = 0; i < static_cast<int>(profile.values.size()); ++i) {
    const ProfiledValue& value = profile.values[i];
    if (value.producer < 0) continue;
    seen[stage_of[value.producer]] = i;
    int touched = 1;
    for (int c : value.consumers) {
      if (seen[stage_of[c]] != i) {
        seen[stage_of[c]] = i;
        ++touched;
      }
    }
    bytes += static_cast<double>(value.bytes_per_sample) * (touched - 1);
  }
  quality.comm_bytes = static_cast<int64_t>(std::llround(bytes * micro_batch));
  return quality;
}

}  // namespace baton::parallel
