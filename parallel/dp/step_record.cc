// A data-parallel step's timeline: hidden communication and trace events (see step_record.h).
#include "parallel/dp/step_record.h"

#include <algorithm>
#include <utility>

namespace baton::parallel {
namespace {

using Clock = ReplicaStepRecord::Clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double micros_since(Clock::time_point origin, Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t - origin).count();
}

// Of the [start, finish] intervals, the fraction within `record`'s backward.
double fraction_in_backward(const ReplicaStepRecord& record,
                            const std::vector<std::pair<Clock::time_point, Clock::time_point>>& intervals) {
  double total = 0, hidden = 0;
  for (const auto& [start, finish] : intervals) {
    total += seconds(finish - start);
    const Clock::time_point lo = std::max(start, record.backward), hi = std::min(finish, record.backward_end);
    if (hi > lo) hidden += seconds(hi - lo);
  }
  return total > 0 ? hidden / total : 1.0;
}

}  // namespace

double hidden_communication_fraction(const ReplicaStepRecord& record) {
  std::vector<std::pair<Clock::time_point, Clock::time_point>> intervals;
  for (const BucketTiming& b : record.buckets) {
    if (b.ran.started && b.ran.finished) intervals.emplace_back(*b.ran.started, *b.ran.finished);
  }
  return fraction_in_backward(record, intervals);
}

double hidden_transfer_fraction(const std::vector<ReplicaStepRecord>& replicas) {
  if (replicas.empty()) return 1.0;
  double sum = 0;
  for (const ReplicaStepRecord& record : replicas) {
    std::vector<std::pair<Clock::time_point, Clock::time_point>> intervals;
    for (size_t b = 0; b < record.buckets.size(); ++b) {
      const comm::WorkTimes& mine = record.buckets[b].ran;
      if (!mine.started || !mine.finished) continue;
      Clock::time_point last_start = *mine.started;
      for (const ReplicaStepRecord& peer : replicas) {
        const comm::WorkTimes& theirs = peer.buckets.at(b).ran;
        if (theirs.started) last_start = std::max(last_start, *theirs.started);
      }
      intervals.emplace_back(std::min(last_start, *mine.finished), *mine.finished);
    }
    sum += fraction_in_backward(record, intervals);
  }
  return sum / static_cast<double>(replicas.size());
}

void append_trace_events(const ReplicaStepRecord& record, Clock::time_point origin, int process,
                         std::vector<TraceEvent>& events) {
  const int compute = 2 * record.rank, communication = compute + 1;
  const auto span = [&](std::string name, std::string category, int lane, Clock::time_point a, Clock::time_point b,
                        nlohmann::json args = nlohmann::json::object()) {
    events.push_back({.name = std::move(name),
                      .category = std::move(category),
                      .process = process,
                      .thread = lane,
                      .start_us = micros_since(origin, a),
                      .duration_us = std::max(0.0, micros_since(a, b)),
                      .args = std::move(args)});
  };
  span("forward", "forward", compute, record.forward, record.backward);
  span("backward", "backward", compute, record.backward, record.backward_end);
  span("optimizer", "optimizer", compute, record.backward_end, record.end);
  for (size_t b = 0; b < record.buckets.size(); ++b) {
    const comm::WorkTimes& ran = record.buckets[b].ran;
    if (!ran.started || !ran.finished) continue;
    span("all-reduce bucket " + std::to_string(b), "allreduce", communication, *ran.started, *ran.finished,
         {{"bytes", b < record.bucket_bytes.size() ? record.bucket_bytes[b] : 0},
          {"issued_us", micros_since(origin, record.buckets[b].issued)}});
  }
}

std::vector<TraceLane> data_parallel_trace_lanes(int first_rank, int count, int process) {
  std::vector<TraceLane> lanes;
  for (int r = first_rank; r < first_rank + count; ++r) {
    lanes.push_back({process, 2 * r, "replica " + std::to_string(r) + " compute"});
    lanes.push_back({process, 2 * r + 1, "replica " + std::to_string(r) + " communication"});
  }
  return lanes;
}

}  // namespace baton::parallel
