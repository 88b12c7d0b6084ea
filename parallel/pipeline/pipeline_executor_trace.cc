// PipelineExecutor's measured timeline: the step recorder (a compute lane per pipeline position or
// stage replica, a lane per link between devices, a communication lane per stage) and its events.
#include "parallel/pipeline/pipeline_executor.h"

namespace baton::parallel {

StepRecorder& PipelineExecutor::recorder() {
  if (recorder_) return *recorder_;
  const int positions = schedule_.devices;
  std::vector<std::string> names;
  for (int p = 0; p < positions; ++p) {
    std::string stages;
    for (int s = p; s < num_stages(); s += positions) stages += (stages.empty() ? "" : ", ") + std::to_string(s);
    // Across processes: the other positions' lanes stay empty in this process's trace.
    const std::string where =
        local(p) ? stage(p).device().str() : "position " + std::to_string(p) + " (another process)";
    if (replicated()) {  // one lane per replica
      names.push_back(where + " compute (stage " + std::to_string(plan_stage_of(p)) + " replica " +
                      std::to_string(replica_of(p)) + ")");
      continue;
    }
    names.push_back(where + " compute (stage" + (num_stages() > positions ? "s " : " ") + stages + ")");
  }
  std::vector<std::pair<int, int>> links;
  for (int i = 0; i < num_stages(); ++i) {
    for (int j = 0; j < num_stages(); ++j) {
      const bool linked = routing_->linked(i, j) || routing_->linked(j, i);
      if (linked && local(i) && local(j) && stage(i).device() != stage(j).device()) links.emplace_back(i, j);
    }
  }
  const int communicating = sync_.active() ? num_stages() : 0;
  recorder_ = std::make_unique<StepRecorder>(names, links, communicating);
  return *recorder_;
}

std::vector<TraceEvent> PipelineExecutor::take_trace() {
  return recorder_ ? recorder_->take() : std::vector<TraceEvent>{};
}

std::vector<TraceLane> PipelineExecutor::trace_lanes() { return recorder().lanes(); }

}  // namespace baton::parallel
