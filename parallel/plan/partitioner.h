// Partitioners: split a profiled model into pipeline stages. All produce the same Plan and report
// infeasible requests (more stages than nodes, a memory cap no split meets) as clear errors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parallel/plan/cluster.h"
#include "parallel/plan/plan.h"
#include "parallel/plan/profile.h"
#include "parallel/plan/schedule.h"

namespace baton::parallel {

struct PartitionRequest {
  const Profile* profile = nullptr;
  const Cluster* cluster = nullptr;
  int stages = 1;             // model stages (pipeline positions x chunks_per_device)
  int chunks_per_device = 1;  // interleaved schedules
  int replicas = 1;           // replicas of every stage (data-parallel groups)
  int batch = 1;              // mini-batch over all replicas
  int micro_batches = 1;      // of the step, over all replicas (each replica takes whole ones in turn)
  ScheduleKind schedule = ScheduleKind::one_f_one_b;  // decides micro-batches in flight for memory
  double memory_cap_bytes = 0;                        // per device; 0: the cluster device's memory
  // antichain only: choose the number of stages (<= stages) and each stage's replication freely
  // with at most `devices` devices in all (PipeDream); otherwise stages x replicas exactly.
  bool free_replication = false;
  int devices = 0;
  bool all_devices = false;        // free replication: exactly `devices` devices (one process each)
  double balance_tolerance = 0.1;  // hypergraph: max part load <= (1 + tolerance) x average
  unsigned seed = 1;               // hypergraph: tie-breaking and coarsening order
};

// Partitioners by name: "uniform", "block", "antichain", "hypergraph".
std::vector<std::string> partitioner_names();
Plan partition(std::string_view partitioner, const PartitionRequest& request);

Plan partition_uniform(const PartitionRequest& request);
Plan partition_block(const PartitionRequest& request);
Plan partition_antichain(const PartitionRequest& request);
Plan partition_hypergraph(const PartitionRequest& request);

// The time the partitioners balance: stage_period_ms (cost_model.h) of the stage's nodes with its
// replicas on the devices the request gives them, with its outgoing activations sent to the next
// stage's device and their gradients sent back, both spread over this stage's replicas (the next
// stage's count is not known while the DP extends a prefix; equal replication makes them the same).
// Values read by later stages than the next are counted on the link to the next stage.
double stage_time_ms(const PartitionRequest& request, const std::vector<int>& nodes, int replicas, int first_device,
                     int next_device);

// The slowest stage_time_ms of `plan` as the partitioners count it (the devices of assign_devices for
// equal replication, consecutive devices otherwise): what partition_over_cut_states minimised.
double plan_bottleneck_ms(const PartitionRequest& request, const Plan& plan);

// Micro-batches one of the `replicas` replicas of stage `stage` of `stages` holds at its peak under
// the request's schedule, a replica taking M / r of the step's M: GPipe all M / r; 1F1B
// min(stages - stage, M / r) (exact for equal replication; with unequal replication an estimate);
// interleaved the same over model stages (an estimate; replica_peak_in_flight measures the exact
// figure for a concrete schedule).
int in_flight_bound(const PartitionRequest& request, int stage, int stages, int replicas);
// The per-device memory cap in bytes: the request's, or the cluster device's memory.
double memory_cap_bytes(const PartitionRequest& request);
// Checks the request (profile and cluster set, stages and replicas >= 1, enough nodes, enough
// devices in the cluster, batch divisible by micro-batches, micro-batches by replicas); errors say
// what to change.
void check_request(const PartitionRequest& request);

}  // namespace baton::parallel
