// StepTimer: how long each pipeline step took on its devices, measured without making the host wait:
// a timing event on every stage stream where the step's work begins and where it ends, read once
// they have completed.
#pragma once

#include <deque>
#include <vector>

#include "runtime/core/stream.h"

namespace baton::parallel {

class StepTimer {
 public:
  // Around one step's work: `streams` are the stages' streams (the same list for both calls).
  void begin(const std::vector<Stream>& streams);
  void end(const std::vector<Stream>& streams);
  // Milliseconds of every step ended so far, in order (waits for the steps still running). A step's
  // time is the longest span, over its devices, from the first of its streams on that device
  // reaching the step to the last one finishing it: idle time inside the step counts, the host's
  // time before the step (the data loading) does not.
  const std::vector<double>& step_ms();
  size_t steps() const { return ms_.size() + in_flight_.size(); }

 private:
  struct Marks {
    std::vector<Event> starts, ends;  // one per stream
  };
  Event take_event(Device device);
  void collect(bool wait);  // moves completed steps from in_flight_ to ms_
  double duration_ms(const Marks& marks) const;

  Marks current_;
  std::deque<Marks> in_flight_;
  std::vector<Event> spare_;  // events of steps already read, reused
  std::vector<double> ms_;
};

}  // namespace baton::parallel
