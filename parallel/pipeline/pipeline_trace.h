// StepRecorder: the measured timeline of pipeline steps. Per instruction a start and an end mark —
// the host clock on CPU devices (their work is synchronous, so host time is work time), CUDA timing
// events on GPU streams, converted to host-relative times after the step's synchronisation — kept
// as TraceEvents in process 1 ("measured"): one lane per pipeline position's compute, one per link.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "parallel/plan/schedule.h"
#include "parallel/plan/trace.h"
#include "parallel/replicas/trace_process.h"
#include "runtime/core/stream.h"

namespace baton::parallel {

// The trace event of one instruction ("F3", "B3 s5", "send act 3 -> s2", "optimizer s1"), its
// category and arguments; the caller sets the lane and the times.
TraceEvent instruction_trace_event(const Instruction& ins, const Schedule& schedule);

// A point in a step: host microseconds since the recorder's origin, or a recorded timing event.
struct TraceMark {
  double host_us = 0;
  std::shared_ptr<Event> event;  // set on CUDA devices; its time is resolved in end_step()
};

class StepRecorder {
 public:
  // `position_names`: one compute lane per pipeline position; `links`: (from stage, to stage) pairs
  // that transfer, one lane each; `communicating_stages`: stages whose gradients are all-reduced
  // across groups (the hybrid), a communication lane each.
  StepRecorder(const std::vector<std::string>& position_names, const std::vector<std::pair<int, int>>& links,
               int communicating_stages = 0);

  // Before a step's workers start (every stream idle): one origin timing event per CUDA device in
  // `streams`, recorded with the host time, so the step's events can be placed on the host clock.
  void begin_step(const std::vector<Stream>& streams);
  // Work issued on `stream` so far is done (CPU: now; CUDA: a timing event recorded on it).
  TraceMark mark(const Stream& stream) const;
  // A host time (a collective's start or end on its communicator's thread).
  TraceMark host_mark(std::chrono::steady_clock::time_point t) const;
  // Adds an event of `position`'s worker (only that worker touches its list).
  void add(int position, TraceEvent event, TraceMark start, TraceMark end);
  int compute_lane(int position) const { return position; }
  int link_lane(int from, int to) const { return link_lanes_.at({from, to}); }
  int communication_lane(int stage) const { return first_communication_lane_ + stage; }
  // After every stream of the step has been synchronised: resolves the CUDA marks.
  void end_step();

  // The steady clock's time of the events' 0 (for lining up the timelines of several processes of
  // one machine, whose steady clocks agree).
  std::chrono::steady_clock::time_point origin() const { return origin_; }
  // The events recorded so far (then cleared), and the lanes they use.
  std::vector<TraceEvent> take();
  const std::vector<TraceLane>& lanes() const { return lanes_; }

 private:
  struct Pending {
    TraceEvent event;
    TraceMark start, end;
  };
  double now_us() const;
  double resolve(const TraceMark& mark) const;

  std::chrono::steady_clock::time_point origin_;
  std::vector<TraceLane> lanes_;
  std::map<std::pair<int, int>, int> link_lanes_;
  int first_communication_lane_ = 0;
  std::vector<std::vector<Pending>> pending_;                              // per position, this step
  std::vector<std::pair<std::unique_ptr<Event>, double>> device_origins_;  // CUDA: event, host us
  std::vector<TraceEvent> events_;
};

}  // namespace baton::parallel
