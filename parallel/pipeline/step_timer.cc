// Pipeline step times from timing events on the stage streams (see step_timer.h).
#include "parallel/pipeline/step_timer.h"

#include <algorithm>
#include <utility>

namespace baton::parallel {

Event StepTimer::take_event(Device device) {
  for (auto it = spare_.begin(); it != spare_.end(); ++it) {
    if (it->device() != device) continue;
    Event event = std::move(*it);
    spare_.erase(it);
    return event;
  }
  return Event(device, /*timing=*/true);
}

void StepTimer::begin(const std::vector<Stream>& streams) {
  collect(/*wait=*/false);
  for (Event& e : current_.starts) spare_.push_back(std::move(e));  // a step that failed before end()
  current_.starts.clear();
  for (const Stream& stream : streams) {
    current_.starts.push_back(take_event(stream.device()));
    current_.starts.back().record(stream);
  }
}

void StepTimer::end(const std::vector<Stream>& streams) {
  for (const Stream& stream : streams) {
    current_.ends.push_back(take_event(stream.device()));
    current_.ends.back().record(stream);
  }
  in_flight_.push_back(std::move(current_));
  current_ = Marks();
}

double StepTimer::duration_ms(const Marks& marks) const {
  double longest = 0;
  for (const Event& start : marks.starts) {
    for (const Event& end : marks.ends) {
      if (start.device() == end.device()) longest = std::max(longest, static_cast<double>(start.elapsed_ms(end)));
    }
  }
  return longest;
}

void StepTimer::collect(bool wait) {
  while (!in_flight_.empty()) {
    Marks& front = in_flight_.front();
    for (const Event& e : front.ends) {
      if (wait) {
        e.synchronize();
      } else if (!e.query()) {
        return;
      }
    }
    ms_.push_back(duration_ms(front));
    for (Event& e : front.starts) spare_.push_back(std::move(e));
    for (Event& e : front.ends) spare_.push_back(std::move(e));
    in_flight_.pop_front();
  }
}

const std::vector<double>& StepTimer::step_ms() {
  collect(/*wait=*/true);
  return ms_;
}

}  // namespace baton::parallel
