// Chrome trace events (the JSON that Perfetto and chrome://tracing open), shared by the simulator's
// predicted timeline and the pipeline executor's measured one, so both can go into one file as
// separate process groups.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace baton::parallel {

struct TraceEvent {
  std::string name;      // "F3" (forward of micro-batch 3), "B3", "send act 3 -> s2", "all-reduce s1"
  std::string category;  // "forward", "backward", "transfer", "allreduce", "optimizer"
  int process = 0;       // process group ("predicted" 0, "measured" 1)
  int thread = 0;        // a lane: device compute, device transfers, ...
  double start_us = 0;
  double duration_us = 0;
  nlohmann::json args = nlohmann::json::object();
};

struct TraceLane {
  int process = 0;
  int thread = 0;
  std::string name;  // "device 0 compute", "link 0->1"
};

// {"traceEvents": [...complete ("X") events, process and thread name metadata...],
//  "displayTimeUnit": "ms"}
nlohmann::json chrome_trace_json(const std::vector<TraceEvent>& events, const std::vector<TraceLane>& lanes,
                                 const std::vector<std::string>& process_names);
// Written atomically.
void write_chrome_trace(const std::string& path, const nlohmann::json& trace);

}  // namespace baton::parallel
