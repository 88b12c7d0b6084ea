// Chrome trace JSON: complete ("X") events and process/thread name metadata ("M"), written atomically.
#include "parallel/plan/trace.h"

#include <cmath>
#include <string>

#include "runtime/core/atomic_file.h"
#include "runtime/core/error.h"

namespace baton::parallel {

namespace {

nlohmann::json metadata(const char* kind, int process, int thread, nlohmann::json args) {
  return {{"name", kind}, {"ph", "M"}, {"pid", process}, {"tid", thread}, {"args", std::move(args)}};
}

}  // namespace

nlohmann::json chrome_trace_json(const std::vector<TraceEvent>& events, const std::vector<TraceLane>& lanes,
                                 const std::vector<std::string>& process_names) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t p = 0; p < process_names.size(); ++p) {
    const int pid = static_cast<int>(p);
    out.push_back(metadata("process_name", pid, 0, {{"name", process_names[p]}}));
    out.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
  }
  for (const TraceLane& lane : lanes) {
    out.push_back(metadata("thread_name", lane.process, lane.thread, {{"name", lane.name}}));
    out.push_back(metadata("thread_sort_index", lane.process, lane.thread, {{"sort_index", lane.thread}}));
  }
  for (const TraceEvent& event : events) {
    BATON_CHECK(std::isfinite(event.start_us) && std::isfinite(event.duration_us) && event.duration_us >= 0,
                "trace event '", event.name, "' (process ", event.process, ", thread ", event.thread,
                ") needs a finite start and a non-negative duration, got start ", event.start_us, " us, duration ",
                event.duration_us, " us");
    nlohmann::json e = {{"name", event.name},      {"cat", event.category}, {"ph", "X"},
                        {"pid", event.process},    {"tid", event.thread},   {"ts", event.start_us},
                        {"dur", event.duration_us}};
    if (!event.args.is_null() && !event.args.empty()) e["args"] = event.args;
    out.push_back(std::move(e));
  }
  return {{"traceEvents", std::move(out)}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(const std::string& path, const nlohmann::json& trace) {
  BATON_CHECK(trace.is_object() && trace.contains("traceEvents") && trace["traceEvents"].is_array(),
              "write_chrome_trace(", path, "): expected an object with a \"traceEvents\" array");
  write_file_atomically(path, trace.dump() + "\n");
}

}  // namespace baton::parallel
