// Cost model shared by the partitioners, the stage table and the simulator: compute time of a set
// of nodes, bytes crossing a cut, transfers, all-reduce, the per-stage period the partitioners
// balance, and memory of a stage under a schedule.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parallel/plan/cluster.h"
#include "parallel/plan/plan.h"
#include "parallel/plan/profile.h"

namespace baton::parallel {

// Forward and backward milliseconds of `nodes` at `batch` samples (per replica).
double forward_ms(const Profile& profile, std::span<const int> nodes, double batch);
double backward_ms(const Profile& profile, std::span<const int> nodes, double batch);
int64_t param_bytes(const Profile& profile, std::span<const int> nodes);

// Per sample: bytes of the values produced inside `in_set` (a node mask) and read outside it,
// counted once per value (a value read by two later nodes outside is sent once per destination
// stage by the executor; the planner counts bytes per value).
int64_t boundary_bytes_out(const Profile& profile, const std::vector<char>& in_set);
// Per sample: bytes of the values read inside `in_set` and produced by a node outside it (graph
// inputs excluded: the loader delivers them).
int64_t boundary_bytes_in(const Profile& profile, const std::vector<char>& in_set);
// Per sample: bytes of the values produced by nodes before `position` in topological order and
// read at or after it (the cut between position-1 and position of a contiguous split).
int64_t cut_bytes(const Profile& profile, int position);

// Bytes of activations one micro-batch keeps alive in a stage between its forward and backward
// (outputs and saved tensors of its nodes), per sample.
int64_t stash_bytes_per_sample(const Profile& profile, std::span<const int> nodes);

// One stage's work as the partitioners and the simulator both count it. A stage's replicas take whole
// micro-batches in turn (replica k: micro-batches k, k + r, ...), so each computes M / r of them.
struct StageWork {
  double fwd_ms = 0;  // one micro-batch on one replica
  double bwd_ms = 0;
  double optimizer_ms = 0;  // per step, after the all-reduce
  double allreduce_ms = 0;  // per step: the stage's gradients over its replicas (0 for one replica)
  int64_t param_bytes = 0;
};
// `devices`: one per replica; `micro_batch`: samples of one micro-batch.
StageWork stage_work(const Profile& profile, const Cluster& cluster, std::span<const int> nodes, double micro_batch,
                     std::span<const int> devices, AllReduceAlgorithm algorithm = AllReduceAlgorithm::ring);

// Bytes one transfer carries: a whole micro-batch (`micro_batch` samples of `bytes_per_sample`), from
// the replica of the sending stage that took it to the replica of the receiving stage that takes it.
int64_t transfer_bytes(int64_t bytes_per_sample, double micro_batch);

// The period the partitioners balance: the time a stage keeps its busiest resource per micro-batch
// of the step in the steady state. Sends are asynchronous (the simulator's semantics), so a stage's
// compute, its outgoing activation link and the returning gradient link are separate resources and
// the period is the largest of them. The r replicas share the M micro-batches, each computing M / r
// and sending their activations over their own links; the per-step tail (all-reduce, then
// optimiser) follows each replica's last backward and is spread over the M micro-batches:
//   period = max((fwd + bwd) / r + (allreduce + optimizer) / M, activation_ms / r, gradient_ms / r),
// activation_ms and gradient_ms being one micro-batch's transfers. For every stage s, M x period is a
// lower bound of the simulated step when the links of different replicas are distinct (bucketed
// all-reduce aside); tests/parallel/plan/test_cost_model_order.cc bounds the simulated step from above
// and checks the order.
double stage_period_ms(const StageWork& work, double activation_ms, double gradient_ms, int micro_batches,
                       int replicas);

struct StageMemory {
  int64_t params = 0;
  int64_t gradients = 0;
  int64_t optimizer_state = 0;
  int64_t activations = 0;  // stash per micro-batch x micro-batches in flight
  int64_t workspace = 0;
  int64_t total() const { return params + gradients + optimizer_state + activations + workspace; }
};
// Memory of one replica of a stage holding `in_flight` micro-batches of `micro_batch` samples.
StageMemory stage_memory(const Profile& profile, std::span<const int> nodes, double micro_batch, int in_flight);

// One row of the stage table.
struct StageSummary {
  int stage = 0;
  std::vector<int> nodes;
  int replicas = 1;
  double fwd_ms = 0;  // one micro-batch (on the replica that takes it)
  double bwd_ms = 0;
  int64_t param_bytes = 0;
  int64_t boundary_bytes_out = 0;  // per micro-batch (all samples of it)
  int64_t memory_bytes = 0;        // per replica, with the schedule's in-flight count per replica
  int in_flight = 1;
};
// `in_flight[s]`: peak micro-batches one replica of stage s holds under the schedule (empty: all it
// takes, M / r, as under GPipe).
std::vector<StageSummary> stage_table(const Plan& plan, const Profile& profile, const std::vector<int>& in_flight = {});

}  // namespace baton::parallel
