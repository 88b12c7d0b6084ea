// The checks and the stages PipelineExecutor's constructors build from a plan and schedule.
#include "parallel/pipeline/pipeline_build.h"

#include <string>

#include "parallel/plan/analytic_profile.h"
#include "runtime/core/error.h"

namespace baton::parallel {

std::vector<std::vector<int>> check_plan_and_schedule(const Graph& graph, const Plan& plan, const Schedule& schedule,
                                                      const PipelineOptions& options) {
  const int num = plan.num_stages();
  for (int s = 0; s < num; ++s) {
    const int replicas = plan.stages[static_cast<size_t>(s)].replicas;
    BATON_CHECK(replicas == 1 || !options.group_sync.active(), "pipeline stage ", s, " has ", replicas,
                " replicas: replicated stages do not run inside a hybrid group (groups replicate every stage)");
    BATON_CHECK(schedule.replicas_of(s) == replicas, "the schedule gives stage ", s, " ", schedule.replicas_of(s),
                " replica(s) but the plan has ", replicas, " (make the schedule with the plan's replicas)");
  }
  const std::string& model = options.model;
  const Profile profile = profile_structure(graph, model);
  validate_plan(plan, profile);
  BATON_CHECK(schedule.stages == num, "the schedule has ", schedule.stages, " stages but the plan has ", num);
  BATON_CHECK(schedule.micro_batches == plan.micro_batches, "the schedule has ", schedule.micro_batches,
              " micro-batches but the plan has ", plan.micro_batches);
  BATON_CHECK(static_cast<int>(schedule.programs.size()) == schedule.devices, "the schedule has ",
              schedule.programs.size(), " instruction lists for ", schedule.devices, " pipeline positions");
  std::vector<std::vector<int>> consumers = stage_consumers(plan, profile);
  try {
    validate_schedule(schedule, consumers);
  } catch (Error& e) {
    e.add_context("while checking the schedule against the plan's stages before running it");
    throw;
  }
  return consumers;
}

std::vector<int> positions_of_stages(const Schedule& schedule) {
  std::vector<int> positions(static_cast<size_t>(schedule.stages), -1);
  for (size_t p = 0; p < schedule.programs.size(); ++p) {
    for (const Instruction& ins : schedule.programs[p])
      positions.at(static_cast<size_t>(ins.stage)) = static_cast<int>(p);
  }
  return positions;
}

void check_processes(const comm::Communicator* processes, const Schedule& schedule, const std::vector<int>& positions) {
  if (processes == nullptr) return;
  BATON_CHECK(processes->size() == schedule.devices,
              "a pipeline across processes needs one process per pipeline "
              "position: the schedule has ",
              schedule.devices, " positions, the communicator ", processes->size(), " ranks");
  for (size_t s = 0; s < positions.size(); ++s) {
    BATON_CHECK(positions[s] >= 0, "pipeline stage ", s, " has no instructions in the schedule");
  }
}

std::vector<std::unique_ptr<PipelineStage>> make_stages(const Graph& graph, const Plan& plan,
                                                        const std::vector<Device>& devices,
                                                        const PipelineOptions& options,
                                                        const std::vector<int>& positions) {
  const int num = plan.num_stages();
  BATON_CHECK(static_cast<int>(devices.size()) == num, "the pipeline has ", num, " stages but ", devices.size(),
              " devices were given (one per stage)");
  BATON_CHECK(options.recompute.empty() || static_cast<int>(options.recompute.size()) == num,
              "PipelineOptions::recompute has ", options.recompute.size(), " entries for ", num, " stages");
  const std::vector<NodeId> order = graph.topological_order();
  std::vector<std::unique_ptr<PipelineStage>> stages;
  for (int s = 0; s < num; ++s) {
    if (options.processes && positions[static_cast<size_t>(s)] != options.processes->rank()) {
      stages.push_back(nullptr);
      continue;
    }
    std::vector<NodeId> nodes;
    for (int i : plan.stages[static_cast<size_t>(s)].nodes) nodes.push_back(order.at(static_cast<size_t>(i)));
    const ExecutorOptions executor{.recompute = !options.recompute.empty() && options.recompute[static_cast<size_t>(s)],
                                   .defer_buffer_updates = options.deferred_batch_norm,
                                   .keep_boundary_formats = true};
    const ParamLayout layout = stage_layout(graph, nodes, options.dtype, options.group_sync);
    stages.push_back(std::make_unique<PipelineStage>(graph, s, std::move(nodes), devices[static_cast<size_t>(s)],
                                                     options.dtype, executor, layout));
  }
  return stages;
}

void check_group_sync(const GroupSync& sync, const Schedule& schedule,
                      const std::vector<std::unique_ptr<PipelineStage>>& stages) {
  if (!sync.active()) return;
  BATON_CHECK(static_cast<int>(sync.communicators.size()) == schedule.stages,
              "the group's gradient synchronisation has ", sync.communicators.size(), " communicators for ",
              schedule.stages, " stages (one per stage)");
  std::vector<int> all_reduces(static_cast<size_t>(schedule.stages), 0);
  for (const auto& program : schedule.programs) {
    for (const Instruction& ins : program) {
      if (ins.op == Op::all_reduce) ++all_reduces[static_cast<size_t>(ins.stage)];
    }
  }
  for (int s = 0; s < schedule.stages; ++s) {
    BATON_CHECK(sync.communicators[static_cast<size_t>(s)] != nullptr || !stages[static_cast<size_t>(s)], "stage ", s,
                " has no communicator");
    BATON_CHECK(all_reduces[static_cast<size_t>(s)] == 1, "the schedule has ", all_reduces[static_cast<size_t>(s)],
                " all_reduce instructions for stage ", s,
                " where a group of a hybrid needs one (make_schedule with all_reduce = true)");
  }
}

}  // namespace baton::parallel
