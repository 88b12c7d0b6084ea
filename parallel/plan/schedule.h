// Pipeline schedules as data: per-device instruction lists (forward, backward, send/receive of
// activations and gradients, gradient all-reduce, optimiser step) for GPipe fill-drain, 1F1B
// (PipeDream-Flush) and interleaved 1F1B. The same lists drive the simulator and the executor.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace baton::parallel {

enum class ScheduleKind { gpipe, one_f_one_b, interleaved };
std::string_view schedule_kind_name(ScheduleKind kind);   // "gpipe", "1f1b", "interleaved"
ScheduleKind parse_schedule_kind(std::string_view name);  // errors list the valid names

enum class Op {
  forward,          // stage, micro_batch
  backward,         // stage, micro_batch
  send_activation,  // stage -> peer (a later stage), micro_batch; asynchronous
  recv_activation,  // stage <- peer (an earlier stage), micro_batch; waits for the matching send
  send_gradient,    // stage -> peer (an earlier stage), micro_batch; asynchronous
  recv_gradient,    // stage <- peer (a later stage), micro_batch; waits for the matching send
  all_reduce,       // the stage's gradients across its replicas (issued after its last backward)
  optimizer_step,   // the stage's parameters
};
std::string_view op_name(Op op);  // "forward", "send_activation", ...

struct Instruction {
  Op op = Op::forward;
  int stage = 0;         // the model stage this acts for (a chunk under interleaving)
  int micro_batch = -1;  // -1 for all_reduce and optimizer_step
  int peer = -1;         // send/recv: the other stage

  bool operator==(const Instruction&) const = default;
};
// "forward stage 1 mb 3", "recv_activation stage 1 mb 3 from stage 0", "all_reduce stage 2".
std::string describe(const Instruction& instruction);

struct Schedule {
  ScheduleKind kind = ScheduleKind::gpipe;
  int devices = 1;  // pipeline positions (workers); stage k runs on position k % devices
  int stages = 1;   // model stages = devices x chunks
  int micro_batches = 1;
  // Forward only (evaluation): forwards and activation transfers, no backward, no optimiser step.
  bool forward_only = false;
  // Replicas of each stage (empty: one each). Replica k of stage s takes the step's micro-batches
  // m = k, k + r, k + 2r, ... (r = replicas[s]): it runs its position's program filtered to those
  // micro-batches (replica_program), so `programs` hold the step's order over all M micro-batches.
  std::vector<int> replicas;
  std::vector<std::vector<Instruction>> programs;  // one per pipeline position, in issue order

  int chunks() const { return stages / devices; }
  int position_of(int stage) const { return stage % devices; }
  // Replicas of `stage` (1 when `replicas` is empty); every stage of a position has as many.
  int replicas_of(int stage) const { return replicas.empty() ? 1 : replicas[static_cast<size_t>(stage)]; }
  bool replicated() const;  // some stage has more than one replica
};

// `consumers` with the chain default filled in (empty: stage s feeds s + 1) and checked: one entry
// per stage, each consumer a later stage, no repeats. Each list is returned sorted.
std::vector<std::vector<int>> resolve_consumers(const std::vector<std::vector<int>>& consumers, int stages);
// The inverse of resolved consumers: producers[j] lists the stages whose outputs stage j reads.
std::vector<std::vector<int>> producers_of(const std::vector<std::vector<int>>& consumers);

// `consumers[s]`: the later stages that read a value stage s produces (Plan's stage_consumers;
// empty means a chain: s feeds s + 1). `chunks` > 1 only for interleaved (stages = devices x chunks).
// `all_reduce`: emit an all_reduce per stage (stages with replicas, or data-parallel groups).
// `replicas` (per stage; empty: one each) must divide M. With G replicas everywhere, each replica's
// program is the schedule of M / G micro-batches (its micro-batches renumbered), so G replicas of
// every stage run exactly as G groups of the whole pipeline. With unequal replication (one chunk per
// device), 1F1B's warm-up at stage s is the largest of the later stages' replicas (enough forwards
// to feed every later replica), r_s (S - s - 1) (each replica's own warm-up, as with equal
// replication) and stage s + 1's warm-up + 1 (no deadlock), capped at M; GPipe is unchanged.
// Impossible requests (chunks > 1 without interleaving, a consumer that is not a later stage, say)
// are errors that say why. Interleaved takes any micro-batch count: when devices does not divide it,
// micro-batches go through the chunks in larger groups (Megatron's microbatch_group_size_per_vp_stage,
// see docs/planner.md). Interleaved with chunks == 1 is 1F1B.
Schedule make_schedule(ScheduleKind kind, int devices, int chunks, int micro_batches,
                       const std::vector<std::vector<int>>& consumers = {}, bool all_reduce = false,
                       const std::vector<int>& replicas = {});

// Replica `replica` of pipeline position `position`: its program, the position's instructions for
// its micro-batches (m mod r == replica) plus every all_reduce and optimizer_step of its stages.
std::vector<Instruction> replica_program(const Schedule& schedule, int position, int replica);
// Per stage: the most micro-batches one replica holds between forward and backward (each replica's
// program runs in order, so this is exact).
std::vector<int> replica_peak_in_flight(const Schedule& schedule);
// Equal replication (G replicas of every stage): what group g runs, its replica programs with micro-
// batch g + G j renumbered j, M / G micro-batches and no replicas. Errors when replication is unequal.
Schedule group_schedule(const Schedule& schedule, int group);

// Forward-only instruction lists (evaluation): each position runs its stages micro-batch by
// micro-batch (micro-batch 0 through all of its stages, then micro-batch 1, ...), receiving each
// stage's inputs before its forward and sending its outputs right after. `chunks` stages per
// position as for interleaved; `consumers` as for make_schedule. `kind` is kept as a label.
Schedule make_forward_schedule(ScheduleKind kind, int devices, int chunks, int micro_batches,
                               const std::vector<std::vector<int>>& consumers = {});

struct ScheduleCheck {
  // Peak micro-batches each stage holds between its forward and its backward.
  std::vector<int> peak_in_flight;
};
// Runs the programs as the executor would (sends asynchronous, receives waiting for their send):
// every send has exactly one matching receive and vice versa, each (stage, micro-batch) forward
// and backward happens once (a forward-only schedule: forwards and activation transfers only),
// backward after forward, a stage's forward after receiving all of its
// inputs and its backward after all of its output gradients, all_reduce after the stage's last
// backward, optimizer_step after that, and no deadlock. `max_in_flight` (optional, per stage)
// bounds the memory. Errors name the position, instruction index and what is wrong.
ScheduleCheck validate_schedule(const Schedule& schedule, const std::vector<std::vector<int>>& consumers = {},
                                const std::vector<int>& max_in_flight = {});

nlohmann::json schedule_to_json(const Schedule& schedule);
Schedule schedule_from_json(const nlohmann::json& json, std::string_view source);

}  // namespace baton::parallel
