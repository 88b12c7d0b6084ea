// The simulator's event engine (used by simulate()): runs a schedule's per-position programs in
// time order over compute lanes, all-reduce lanes and FIFO link lanes, given each stage's costs.
#pragma once

#include <cstdint>
#include <vector>

#include "parallel/schedule.h"

namespace baton::parallel::sim {

struct Bucket {
  int64_t bytes = 0;
  double ready_ms = 0;  // after the start of the stage's last backward: its last gradient is final
  double allreduce_ms = 0;
  int first_node = -1;  // profile nodes covered, in reverse topological order: first..last
  int last_node = -1;
};

struct StageCosts {
  double fwd_ms = 0;  // one micro-batch, one replica
  double bwd_ms = 0;
  double optimizer_ms = 0;
  bool all_reduce = false;      // replicas > 1 and parameters to reduce
  double allreduce_ms = 0;      // the whole stage in one call
  std::vector<Bucket> buckets;  // non-empty: bucketed all-reduce started during the last backward
  int device = 0;               // replica 0's device (link end points)
  int64_t param_bytes = 0;
  int pool = -1;  // the compute pool its devices share (-1: hardware of its own)
  int slots = 1;  // places of the pool one of its computations takes (its replicas there)
};

enum class LaneKind { compute, allreduce, link };
struct Lane {
  LaneKind kind = LaneKind::compute;
  int position = -1;  // compute, allreduce
  int from = -1;      // link: devices
  int to = -1;
};

enum class Activity { forward, backward, send_activation, send_gradient, allreduce, optimizer };
struct Interval {
  int lane = 0;
  Activity activity = Activity::forward;
  double start_ms = 0;
  double end_ms = 0;
  int stage = 0;
  int micro_batch = -1;
  int peer = -1;    // transfers: the receiving stage
  int bucket = -1;  // bucketed all-reduce
  int64_t bytes = 0;
};

struct Timeline {
  std::vector<Lane> lanes;  // compute lanes first (lane p = position p), then in order of first use
  std::vector<Interval> intervals;
  std::vector<int> peak_in_flight;  // per stage
};

// `transfer_ms[a][b]`: one micro-batch's transfer from stage a to stage b (activations a < b,
// gradients a > b); `transfer_bytes[a][b]` likewise. `pool_places[k]`: computations pool k runs at
// once (a computation waits until its stage's slots are free; one needing more than the pool has
// takes all of it for proportionally longer). The schedule must be valid.
Timeline run_programs(const Schedule& schedule, const std::vector<StageCosts>& stages,
                      const std::vector<std::vector<double>>& transfer_ms,
                      const std::vector<std::vector<int64_t>>& transfer_bytes,
                      const std::vector<int>& pool_places = {});

}  // namespace baton::parallel::sim
