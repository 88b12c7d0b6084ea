// How good a split is in the hypergraph model, for any partitioner's plan: load balance and the
// bytes crossing stages; plus the hypergraph partitioner's detailed result (the bound it used).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parallel/plan/partitioner.h"
#include "parallel/plan/plan.h"
#include "parallel/plan/profile.h"

namespace baton::parallel {

struct PartitionQuality {
  // A stage's load per micro-batch of the step: forward + backward ms of its nodes at one micro-batch,
  // over its replicas (which take the micro-batches in turn).
  std::vector<double> stage_ms;
  double max_stage_ms = 0;
  double mean_stage_ms = 0;
  double balance_ratio = 1;  // max / mean (1: perfectly balanced; 1 when every load is 0)
  // Per micro-batch (all its samples): sum over values with a producer of bytes x (stages that
  // produce or read it - 1): each value counted once per stage it reaches beyond its producer's.
  int64_t comm_bytes = 0;
};
PartitionQuality partition_quality(const Plan& plan, const Profile& profile);

struct HypergraphResult {
  Plan plan;
  double requested_bound_ms = 0;  // (1 + balance_tolerance) x mean stage load
  double bound_ms = 0;            // the bound used: the requested one, or the relaxed one
  bool relaxed = false;           // the requested bound was not achievable (see note)
  std::string note;               // why it was relaxed; empty otherwise
  double comm_bytes = 0;          // connectivity - 1 of the result, bytes per micro-batch
  double max_load_ms = 0;
};
// partition_hypergraph with the bound it used and whether it had to relax it.
HypergraphResult partition_hypergraph_detailed(const PartitionRequest& request);

}  // namespace baton::parallel
