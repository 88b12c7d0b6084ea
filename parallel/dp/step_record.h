// ReplicaStepRecord: when one data-parallel replica's step ran forward, backward, each bucket's
// all-reduce and the optimiser — for the trace (a compute and a communication lane per replica)
// and for the share of communication hidden behind backward.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "parallel/plan/trace.h"
#include "parallel/replicas/gradient_sync.h"

namespace baton::parallel {

struct ReplicaStepRecord {
  using Clock = std::chrono::steady_clock;
  int rank = 0;
  Clock::time_point forward, backward, backward_end, end;  // `end`: after the optimiser
  std::vector<BucketTiming> buckets;
  std::vector<size_t> bucket_bytes;
  std::vector<std::string> ready_order;  // parameter names as backward made them final
};

// Of the time the buckets' all-reduces ran ([started, finished] each, on this replica's
// communication thread), the fraction that lies within backward ([backward, backward_end]): 1 when
// all communication is hidden behind backward; 1 with no communication.
double hidden_communication_fraction(const ReplicaStepRecord& record);
// The same for the records of every replica of one step (all in this process), counting each
// all-reduce from the moment the last replica took it up: the time a replica waits for a slower
// peer to reach the bucket is load imbalance, not communication. The mean over the replicas.
double hidden_transfer_fraction(const std::vector<ReplicaStepRecord>& replicas);

// Appends `record` as complete events: "forward", "backward" and "optimizer" on lane 2 x rank,
// "all-reduce bucket b" (with its bytes) on lane 2 x rank + 1; times in microseconds from `origin`.
void append_trace_events(const ReplicaStepRecord& record, ReplicaStepRecord::Clock::time_point origin, int process,
                         std::vector<TraceEvent>& events);
// The lanes of ranks [first, first + count): "replica r compute" and "replica r communication".
std::vector<TraceLane> data_parallel_trace_lanes(int first_rank, int count, int process);

}  // namespace baton::parallel
