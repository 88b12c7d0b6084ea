// Discrete-event simulation of one training step: a plan's stages on a cluster's devices follow a
// schedule's instruction lists, with compute per device, transfers per link and collectives, each
// overlapping the others where the hardware would. Data parallel alone (one stage, bucketed
// all-reduce overlapped with backward), pipelines and hybrids run through the same engine.
#pragma once

#include <cstdint>
#include <vector>

#include "parallel/plan/cluster.h"
#include "parallel/plan/plan.h"
#include "parallel/plan/profile.h"
#include "parallel/plan/schedule.h"
#include "parallel/plan/trace.h"

namespace baton::parallel {

struct SimulationOptions {
  // 0: a stage's gradients are all-reduced in one call after its last micro-batch's backward
  // (per-partition delayed communication). > 0: buckets of about this many bytes, each started as
  // soon as the last micro-batch's backward has produced all of its gradients (DDP-style).
  int64_t bucket_bytes = 0;
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::ring;
  bool free_communication = false;  // every transfer and collective takes no time (for tests)
  bool record_trace = true;
};

struct SimulationResult {
  double step_ms = 0;
  double throughput = 0;  // samples per second (mini-batch / step time)
  // Idle share of the pipeline devices' compute between the step's first forward and last
  // backward (GPipe with equal stages and free communication: (S - 1) / (M + S - 1)).
  double bubble_fraction = 0;
  std::vector<double> stage_utilisation;   // per stage: busy compute time / (replicas x step time)
  std::vector<int64_t> peak_memory_bytes;  // per stage, one replica
  std::vector<int> peak_in_flight;         // per stage, one replica
  double compute_ms = 0;                   // busy compute summed over all devices
  double communication_ms = 0;             // transfers and collectives summed
  std::vector<TraceEvent> events;          // process 0 ("predicted")
  std::vector<TraceLane> lanes;
};

// The schedule must match the plan (same stages, micro-batches and replicas); it is validated first.
// Every replica of a stage is simulated: replica k computes micro-batches k, k + r, ... (whole ones),
// transfers go between the replicas that take a micro-batch, and a stage's all-reduce starts when the
// last of its replicas reaches it.
SimulationResult simulate(const Plan& plan, const Schedule& schedule, const Profile& profile, const Cluster& cluster,
                          const SimulationOptions& options = {});

}  // namespace baton::parallel
