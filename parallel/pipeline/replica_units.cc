// Replica units of a PipelineExecutor: their plan, schedules and gradient communicators.
#include "parallel/pipeline/replica_units.h"

#include "parallel/replicas/replica_set.h"
#include "runtime/core/error.h"

namespace baton::parallel {

int ReplicaUnits::taking(int s, int micro_batch) const {
  const std::vector<int>& units = of_stage.at(static_cast<size_t>(s));
  return units[static_cast<size_t>(micro_batch) % units.size()];
}

ReplicaUnits replica_units(const Plan& plan) {
  ReplicaUnits units;
  for (int s = 0; s < plan.num_stages(); ++s) {
    units.of_stage.emplace_back();
    for (int k = 0; k < plan.stages[static_cast<size_t>(s)].replicas; ++k) {
      units.of_stage.back().push_back(units.count());
      units.stage.push_back(s);
      units.replica.push_back(k);
    }
  }
  return units;
}

Plan unit_plan(const Plan& plan, const ReplicaUnits& units) {
  Plan out = plan;
  out.stages.clear();
  for (int u = 0; u < units.count(); ++u) {
    const Stage& stage = plan.stages.at(static_cast<size_t>(units.stage[u]));
    out.stages.push_back({stage.nodes, 1, {stage.devices.at(static_cast<size_t>(units.replica[u]))}});
  }
  return out;
}

namespace {

// An instruction of stage `s`'s replica as its unit runs it.
Instruction for_unit(const Instruction& in, int unit, const ReplicaUnits& units) {
  Instruction out = in;
  out.stage = unit;
  if (in.peer >= 0) out.peer = units.taking(in.peer, in.micro_batch);
  return out;
}

Schedule unit_shell(const Schedule& like, const ReplicaUnits& units) {
  Schedule out;
  out.kind = like.kind;
  out.devices = units.count();
  out.stages = units.count();
  out.micro_batches = like.micro_batches;
  out.forward_only = like.forward_only;
  out.programs.resize(static_cast<size_t>(units.count()));
  return out;
}

}  // namespace

Schedule unit_schedule(const Schedule& step, const ReplicaUnits& units) {
  BATON_CHECK(step.chunks() == 1, "replicated pipeline stages run one stage per position, not ", step.chunks(),
              " chunks");
  BATON_CHECK(step.stages == static_cast<int>(units.of_stage.size()), "the schedule has ", step.stages,
              " stages, the plan ", units.of_stage.size());
  Schedule out = unit_shell(step, units);
  for (int u = 0; u < units.count(); ++u) {
    const int s = units.stage[u];
    BATON_CHECK(step.replicas_of(s) == static_cast<int>(units.of_stage[static_cast<size_t>(s)].size()),
                "the schedule gives stage ", s, " ", step.replicas_of(s), " replica(s), the plan ",
                units.of_stage[static_cast<size_t>(s)].size());
    for (const Instruction& in : replica_program(step, s, units.replica[u])) {
      out.programs[static_cast<size_t>(u)].push_back(for_unit(in, u, units));
    }
  }
  return out;
}

Schedule unit_forward_schedule(ScheduleKind kind, int micro_batches, const std::vector<std::vector<int>>& consumers,
                               const ReplicaUnits& units) {
  const int stages = static_cast<int>(units.of_stage.size());
  const Schedule forward = make_forward_schedule(kind, stages, 1, micro_batches, consumers);
  Schedule out = unit_shell(forward, units);
  for (int s = 0; s < stages; ++s) {
    const int unit = units.of_stage[static_cast<size_t>(s)].front();
    for (Instruction in : forward.programs[static_cast<size_t>(s)]) {
      in.stage = unit;
      if (in.peer >= 0) in.peer = units.of_stage[static_cast<size_t>(in.peer)].front();
      out.programs[static_cast<size_t>(unit)].push_back(in);
    }
  }
  return out;
}

GroupSync replica_sync(const ReplicaUnits& units, const std::vector<Device>& devices, GroupSync settings,
                       comm::CommBackend backend) {
  BATON_CHECK(static_cast<int>(devices.size()) == units.count(), "replicated pipeline: ", devices.size(),
              " devices for ", units.count(), " stage replicas (one each)");
  settings.options.reduce = comm::ReduceOp::sum;
  settings.communicators.assign(static_cast<size_t>(units.count()), nullptr);
  std::vector<std::vector<Device>> stage_devices(units.of_stage.size());
  for (size_t s = 0; s < units.of_stage.size(); ++s) {
    for (const int u : units.of_stage[s]) stage_devices[s].push_back(devices[static_cast<size_t>(u)]);
  }
  std::vector<std::vector<std::unique_ptr<comm::Communicator>>> comms = make_replica_communicators(
      stage_devices, backend, [](size_t s) { return "stage " + std::to_string(s) + "'s replicas"; });
  for (size_t s = 0; s < units.of_stage.size(); ++s) {
    for (size_t k = 0; k < comms[s].size(); ++k) {
      settings.communicators[static_cast<size_t>(units.of_stage[s][k])] = std::move(comms[s][k]);
    }
  }
  return settings;
}

GroupSync replica_sync_across(const ReplicaUnits& units, comm::Communicator& processes, Device device,
                              GroupSync settings, comm::CommBackend backend) {
  BATON_CHECK(processes.size() == units.count(), "replicated pipeline across processes: ", processes.size(),
              " processes for ", units.count(), " stage replicas (one process each)");
  const int unit = processes.rank();
  settings.options.reduce = comm::ReduceOp::sum;
  settings.communicators.assign(static_cast<size_t>(units.count()), nullptr);
  settings.communicators[static_cast<size_t>(unit)] =
      make_process_replica(processes, units.stage[unit], units.replica[unit], device, backend).tensors;
  return settings;
}

}  // namespace baton::parallel
