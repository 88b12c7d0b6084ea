// The simulator's event engine (used by simulate()): runs a schedule's per-replica programs in time
// order over compute lanes, all-reduce lanes and FIFO link lanes, given each stage's costs.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "parallel/plan/schedule.h"

namespace baton::parallel::sim {

struct Bucket {
  int64_t bytes = 0;
  double ready_ms = 0;  // after the start of the stage's last backward: its last gradient is final
  double allreduce_ms = 0;
  int first_node = -1;  // profile nodes covered, in reverse topological order: first..last
  int last_node = -1;
};

struct StageCosts {
  double fwd_ms = 0;  // one micro-batch on one replica
  double bwd_ms = 0;
  double optimizer_ms = 0;
  bool all_reduce = false;      // replicas > 1 and parameters to reduce
  double allreduce_ms = 0;      // the whole stage in one call
  std::vector<Bucket> buckets;  // non-empty: bucketed all-reduce started during the last backward
  std::vector<int> devices;     // one per replica (link end points)
  std::vector<int> pools;       // per replica: the compute pool its device shares (empty or -1: its own)
  int64_t param_bytes = 0;
};

enum class LaneKind { compute, allreduce, link };
struct Lane {
  LaneKind kind = LaneKind::compute;
  int position = -1;  // compute, allreduce
  int replica = 0;    // compute: the position's replica
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
  // Compute lanes first, one per (position, replica) in that order, then the others in order of use.
  std::vector<Lane> lanes;
  int compute_lanes = 0;
  std::vector<Interval> intervals;
  std::vector<int> peak_in_flight;  // per stage, one replica
};

// Milliseconds of one transfer of `bytes` from device `from` to device `to`.
using TransferTime = std::function<double(int64_t bytes, int from, int to)>;

// Replica k of a position runs replica_program(schedule, position, k). A transfer of micro-batch m
// goes from the device of replica m mod r_a of stage a to that of replica m mod r_b of stage b,
// carrying `transfer_bytes[a][b]`; a stage's all-reduce starts when every replica has reached it.
// `pool_places[k]`: computations pool k runs at once (a computation waits for a free place). The
// schedule must be valid.
Timeline run_programs(const Schedule& schedule, const std::vector<StageCosts>& stages,
                      const std::vector<std::vector<int64_t>>& transfer_bytes, const TransferTime& transfer_ms,
                      const std::vector<int>& pool_places = {});

}  // namespace baton::parallel::sim
