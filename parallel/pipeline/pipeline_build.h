// What PipelineExecutor's constructors check and build from a plan and schedule: the checks of the
// plan, the schedule, the processes and a hybrid group's synchronisation, the pipeline position of
// every stage, and the stages this process runs. Internal to the pipeline executor.
#pragma once

#include <memory>
#include <vector>

#include "parallel/pipeline/pipeline_executor.h"

namespace baton::parallel {

// The plan against the graph, the schedule against the plan: returns the plan's stage consumers.
std::vector<std::vector<int>> check_plan_and_schedule(const Graph& graph, const Plan& plan, const Schedule& schedule,
                                                      const PipelineOptions& options);

// The pipeline position of every stage: the one whose instruction list runs it.
std::vector<int> positions_of_stages(const Schedule& schedule);

// Across processes: one rank per position, and no stage without instructions.
void check_processes(const comm::Communicator* processes, const Schedule& schedule, const std::vector<int>& positions);

// One PipelineStage per plan stage this process runs, over its nodes, on its device (null for the
// stages of other processes).
std::vector<std::unique_ptr<PipelineStage>> make_stages(const Graph& graph, const Plan& plan,
                                                        const std::vector<Device>& devices,
                                                        const PipelineOptions& options,
                                                        const std::vector<int>& positions);

// A hybrid group: one communicator per stage (per local stage across processes), and every stage's
// all_reduce in the schedule.
void check_group_sync(const GroupSync& sync, const Schedule& schedule,
                      const std::vector<std::unique_ptr<PipelineStage>>& stages);

}  // namespace baton::parallel
