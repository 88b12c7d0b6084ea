// The measured timeline of pipeline steps: instruction events and the StepRecorder's marks,
// resolved to host-relative times (see pipeline_trace.h).
#include "parallel/pipeline/pipeline_trace.h"

#include <algorithm>

#include "runtime/core/error.h"

namespace baton::parallel {

TraceEvent instruction_trace_event(const Instruction& ins, const Schedule& schedule) {
  TraceEvent e;
  const std::string chunk = schedule.chunks() > 1 ? " s" + std::to_string(ins.stage) : std::string();
  const std::string mb = std::to_string(ins.micro_batch);
  e.args = {{"stage", ins.stage}};
  if (ins.micro_batch >= 0) e.args["micro_batch"] = ins.micro_batch;
  switch (ins.op) {
    case Op::forward:
      e.name = "F" + mb + chunk;
      e.category = "forward";
      break;
    case Op::backward:
      e.name = "B" + mb + chunk;
      e.category = "backward";
      break;
    case Op::send_activation:
    case Op::send_gradient:
      e.name = (ins.op == Op::send_activation ? "send act " : "send grad ") + mb + " -> s" + std::to_string(ins.peer);
      e.category = "transfer";
      e.args["to_stage"] = ins.peer;
      break;
    default:
      e.name = "optimizer s" + std::to_string(ins.stage);
      e.category = "optimizer";
      break;
  }
  return e;
}

StepRecorder::StepRecorder(const std::vector<std::string>& position_names,
                           const std::vector<std::pair<int, int>>& links, int communicating_stages)
    : origin_(std::chrono::steady_clock::now()), pending_(position_names.size()) {
  for (size_t p = 0; p < position_names.size(); ++p) {
    lanes_.push_back({kMeasuredProcess, static_cast<int>(p), position_names[p]});
  }
  for (const auto& [from, to] : links) {
    const int lane = static_cast<int>(lanes_.size());
    link_lanes_[{from, to}] = lane;
    lanes_.push_back({kMeasuredProcess, lane, "link s" + std::to_string(from) + "->s" + std::to_string(to)});
  }
  first_communication_lane_ = static_cast<int>(lanes_.size());
  for (int s = 0; s < communicating_stages; ++s) {
    lanes_.push_back({kMeasuredProcess, first_communication_lane_ + s, "stage " + std::to_string(s) + " all-reduce"});
  }
}

TraceMark StepRecorder::host_mark(std::chrono::steady_clock::time_point t) const {
  return {std::chrono::duration<double, std::micro>(t - origin_).count(), nullptr};
}

double StepRecorder::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_).count();
}

void StepRecorder::begin_step(const std::vector<Stream>& streams) {
  device_origins_.clear();
  for (auto& list : pending_) list.clear();
  for (const Stream& stream : streams) {
    if (!stream.device().is_cuda()) continue;
    bool seen = false;
    for (const auto& [event, host] : device_origins_) seen = seen || event->device() == stream.device();
    if (seen) continue;
    auto event = std::make_unique<Event>(stream.device(), /*timing=*/true);
    const double host = now_us();
    event->record(stream);
    device_origins_.emplace_back(std::move(event), host);
  }
}

TraceMark StepRecorder::mark(const Stream& stream) const {
  TraceMark m;
  if (stream.device().is_cuda()) {
    m.event = std::make_shared<Event>(stream.device(), /*timing=*/true);
    m.event->record(stream);
  } else {
    m.host_us = now_us();
  }
  return m;
}

void StepRecorder::add(int position, TraceEvent event, TraceMark start, TraceMark end) {
  pending_.at(static_cast<size_t>(position)).push_back({std::move(event), std::move(start), std::move(end)});
}

double StepRecorder::resolve(const TraceMark& mark) const {
  if (!mark.event) return mark.host_us;
  for (const auto& [origin, host] : device_origins_) {
    if (origin->device() == mark.event->device()) return host + 1000.0 * origin->elapsed_ms(*mark.event);
  }
  BATON_FAIL("pipeline trace: no origin event on ", mark.event->device().str(),
             " (begin_step was not given its stream)");
}

void StepRecorder::end_step() {
  for (auto& list : pending_) {
    for (Pending& p : list) {
      const double start = resolve(p.start), end = resolve(p.end);
      p.event.process = kMeasuredProcess;
      p.event.start_us = start;
      p.event.duration_us = std::max(0.0, end - start);
      events_.push_back(std::move(p.event));
    }
    list.clear();
  }
  device_origins_.clear();
}

std::vector<TraceEvent> StepRecorder::take() { return std::exchange(events_, {}); }

}  // namespace baton::parallel
