// Replicated stages inside one PipelineExecutor: each replica of a stage is a unit with its own
// parameters, device, worker and program (the stage's program filtered to the micro-batches it
// takes, m mod r), transfers go to the unit that takes the micro-batch, and a stage's units sum
// their gradients. These helpers derive the units' plan, schedules and gradient communicators.
#pragma once

#include <vector>

#include "parallel/comm/backend_table.h"
#include "parallel/pipeline/stage_sync.h"
#include "parallel/plan/plan.h"
#include "parallel/plan/schedule.h"
#include "runtime/core/device.h"

namespace baton::parallel {

struct ReplicaUnits {
  std::vector<int> stage;                  // [unit]: its plan stage
  std::vector<int> replica;                // [unit]: its replica of that stage
  std::vector<std::vector<int>> of_stage;  // [stage][replica]: the unit

  int count() const { return static_cast<int>(stage.size()); }
  // The unit that takes micro-batch `micro_batch` in stage `s`.
  int taking(int s, int micro_batch) const;
};

// Units in stage order, each stage's replicas in turn (unit ids 0 .. sum of replicas - 1).
ReplicaUnits replica_units(const Plan& plan);

// One plan stage per unit (the stage's nodes, one replica on the unit's device): what the stages
// and their boundary values are built from.
Plan unit_plan(const Plan& plan, const ReplicaUnits& units);

// The step's schedule (over plan stages, with their replicas; one chunk per position) as one program
// per unit: replica_program of its stage, every stage index a unit and every transfer's peer the unit
// of the peer stage that takes the micro-batch.
Schedule unit_schedule(const Schedule& step, const ReplicaUnits& units);

// Evaluation: the forward-only schedule over the plan's stages (`consumers`: the plan's) run by each
// stage's first replica; the other units have empty programs.
Schedule unit_forward_schedule(ScheduleKind kind, int micro_batches, const std::vector<std::vector<int>>& consumers,
                               const ReplicaUnits& units);

// Per unit, a communicator over the units of its stage (threads of this process: `backend` checked by
// comm/backend_table.h, inproc on CPU devices and NCCL on GPUs under auto), summing their gradients
// (each unit's cover its micro-batches at the batch's loss scale).
GroupSync replica_sync(const ReplicaUnits& units, const std::vector<Device>& devices, GroupSync settings,
                       comm::CommBackend backend = comm::CommBackend::automatic);

// Across processes (process u runs unit u): this process's unit's communicator over the processes of
// its stage's units, split from `processes` (every process calls this together), NCCL over it when
// `device` is a GPU (comm/backend_table.h's process row, `backend` checked); the other units' entries
// are null.
GroupSync replica_sync_across(const ReplicaUnits& units, comm::Communicator& processes, Device device,
                              GroupSync settings, comm::CommBackend backend = comm::CommBackend::automatic);

}  // namespace baton::parallel
