// The simulator's event engine: picks, among the pipeline positions whose next instruction can
// start, the earliest one, so every shared lane (links, all-reduce lanes) is claimed in time order.
#include "parallel/simulator_engine.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "runtime/core/error.h"

namespace baton::parallel::sim {

namespace {

// (gradient?, sending stage, receiving stage, micro-batch) -> arrival time.
using TransferKey = std::tuple<int, int, int, int>;

class Engine {
 public:
  Engine(const Schedule& schedule, const std::vector<StageCosts>& stages,
         const std::vector<std::vector<double>>& transfer_ms, const std::vector<std::vector<int64_t>>& transfer_bytes,
         const std::vector<int>& pool_places)
      : schedule_(schedule), stages_(stages), transfer_ms_(transfer_ms), transfer_bytes_(transfer_bytes) {
    for (const int places : pool_places) {
      BATON_CHECK(places >= 1, "simulate: a compute pool needs at least one place, got ", places);
      place_free_.emplace_back(static_cast<size_t>(places), 0.0);
    }
    for (const StageCosts& s : stages) {
      BATON_CHECK(s.pool < static_cast<int>(place_free_.size()) && s.slots >= 1, "simulate: compute pool ", s.pool,
                  " with ", s.slots, " slot(s), but ", place_free_.size(), " pool(s)");
    }
    const int positions = schedule.devices;
    for (int p = 0; p < positions; ++p) timeline_.lanes.push_back({LaneKind::compute, p, -1, -1});
    lane_free_.assign(positions, 0.0);
    allreduce_lane_.assign(positions, -1);
    pc_.assign(positions, 0);
    allreduce_done_.assign(schedule.stages, 0.0);
    in_flight_.assign(schedule.stages, 0);
    timeline_.peak_in_flight.assign(schedule.stages, 0);
    // The last backward of each stage (its gradients are final after it).
    last_backward_.assign(schedule.stages, {-1, -1});
    for (int p = 0; p < positions; ++p) {
      const auto& program = schedule.programs[p];
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        if (program[i].op == Op::backward) last_backward_[program[i].stage] = {p, i};
      }
    }
  }

  Timeline run() {
    const int positions = schedule_.devices;
    for (;;) {
      int best = -1;
      double best_time = std::numeric_limits<double>::infinity();
      bool remaining = false;
      for (int p = 0; p < positions; ++p) {
        if (pc_[p] >= schedule_.programs[p].size()) continue;
        remaining = true;
        const std::optional<double> t = ready_time(p, schedule_.programs[p][pc_[p]]);
        if (t && *t < best_time) {
          best = p;
          best_time = *t;
        }
      }
      if (!remaining) break;
      BATON_CHECK(best >= 0, "simulate: no pipeline position can proceed (every one waits for a transfer)");
      execute(best, best_time);
      ++pc_[best];
    }
    return std::move(timeline_);
  }

 private:
  std::optional<double> ready_time(int p, const Instruction& in) const {
    switch (in.op) {
      case Op::recv_activation:
        return arrival({0, in.peer, in.stage, in.micro_batch}, p);
      case Op::recv_gradient:
        return arrival({1, in.peer, in.stage, in.micro_batch}, p);
      case Op::optimizer_step:
        return std::max({lane_free_[p], allreduce_done_[in.stage], places_ready(stages_[in.stage])});
      case Op::forward:
      case Op::backward:
        return std::max(lane_free_[p], places_ready(stages_[in.stage]));
      default:
        return lane_free_[p];
    }
  }

  // When enough places of the stage's compute pool are free for one of its computations.
  double places_ready(const StageCosts& stage) const {
    if (stage.pool < 0) return 0.0;
    const std::vector<double>& places = place_free_[stage.pool];
    const size_t k = std::min(places.size(), static_cast<size_t>(stage.slots));
    if (k == 1) return *std::min_element(places.begin(), places.end());  // the usual case: no copy
    std::vector<double> free = places;
    std::nth_element(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(k - 1), free.end());
    return free[k - 1];
  }

  std::optional<double> arrival(const TransferKey& key, int p) const {
    const auto it = arrivals_.find(key);
    if (it == arrivals_.end()) return std::nullopt;
    return std::max(lane_free_[p], it->second);
  }

  void execute(int p, double t) {
    const Instruction& in = schedule_.programs[p][pc_[p]];
    const StageCosts& stage = stages_[in.stage];
    switch (in.op) {
      case Op::forward: {
        compute(p, Activity::forward, in, t, stage.fwd_ms);
        const int count = ++in_flight_[in.stage];
        timeline_.peak_in_flight[in.stage] = std::max(timeline_.peak_in_flight[in.stage], count);
        break;
      }
      case Op::backward:
        compute(p, Activity::backward, in, t, stage.bwd_ms);
        --in_flight_[in.stage];
        if (stage.all_reduce && !stage.buckets.empty() &&
            last_backward_[in.stage] == std::pair<int, int>{p, static_cast<int>(pc_[p])}) {
          for (int b = 0; b < static_cast<int>(stage.buckets.size()); ++b) {
            const Bucket& bucket = stage.buckets[b];
            allreduce_done_[in.stage] = reduce(p, in.stage, t + bucket.ready_ms, bucket.allreduce_ms, bucket.bytes, b);
          }
        }
        break;
      case Op::send_activation:
        send(0, in, t);
        break;
      case Op::send_gradient:
        send(1, in, t);
        break;
      case Op::recv_activation:
      case Op::recv_gradient:
        lane_free_[p] = t;  // compute waits for the arrival
        break;
      case Op::all_reduce:
        if (stage.all_reduce && stage.buckets.empty()) {
          allreduce_done_[in.stage] = reduce(p, in.stage, t, stage.allreduce_ms, stage.param_bytes, -1);
        } else if (!stage.all_reduce) {
          allreduce_done_[in.stage] = t;
        }  // bucketed: started by the last backward
        break;
      case Op::optimizer_step:
        compute(p, Activity::optimizer, in, t, stage.optimizer_ms);
        break;
    }
  }

  void compute(int p, Activity activity, const Instruction& in, double t, double ms) {
    const StageCosts& stage = stages_[in.stage];
    if (stage.pool >= 0) {
      // Takes the earliest-free places (all free by t); more slots than places: all, for longer.
      std::vector<double>& free = place_free_[stage.pool];
      const size_t k = std::min(free.size(), static_cast<size_t>(stage.slots));
      ms *= static_cast<double>(stage.slots) / static_cast<double>(k);
      // (Each taken place ends after t, so the next earliest is another one.)
      for (size_t i = 0; i < k; ++i) *std::min_element(free.begin(), free.end()) = t + ms;
    }
    timeline_.intervals.push_back({p, activity, t, t + ms, in.stage, in.micro_batch, -1, -1, 0});
    lane_free_[p] = t + ms;
  }

  // Queues an all-reduce on position p's all-reduce lane (FIFO); returns when it completes.
  double reduce(int p, int stage, double ready, double ms, int64_t bytes, int bucket) {
    if (allreduce_lane_[p] < 0) {
      allreduce_lane_[p] = static_cast<int>(timeline_.lanes.size());
      timeline_.lanes.push_back({LaneKind::allreduce, p, -1, -1});
      lane_busy_until_.resize(timeline_.lanes.size(), 0.0);
    }
    const int lane = allreduce_lane_[p];
    const double start = std::max(ready, busy_until(lane));
    lane_busy_until_[lane] = start + ms;
    timeline_.intervals.push_back({lane, Activity::allreduce, start, start + ms, stage, -1, -1, bucket, bytes});
    return start + ms;
  }

  // Asynchronous: the transfer waits for its link (FIFO per ordered device pair), the sender does not.
  void send(int gradient, const Instruction& in, double t) {
    const int from = stages_[in.stage].device;
    const int to = stages_[in.peer].device;
    double arrival = t;
    if (from != to) {
      const auto [it, added] = link_lane_.try_emplace({from, to}, static_cast<int>(timeline_.lanes.size()));
      if (added) {
        timeline_.lanes.push_back({LaneKind::link, -1, from, to});
        lane_busy_until_.resize(timeline_.lanes.size(), 0.0);
      }
      const int lane = it->second;
      const double start = std::max(t, busy_until(lane));
      arrival = start + transfer_ms_[in.stage][in.peer];
      lane_busy_until_[lane] = arrival;
      timeline_.intervals.push_back({lane, gradient ? Activity::send_gradient : Activity::send_activation, start,
                                     arrival, in.stage, in.micro_batch, in.peer, -1,
                                     transfer_bytes_[in.stage][in.peer]});
    }
    arrivals_[{gradient, in.stage, in.peer, in.micro_batch}] = arrival;
  }

  double busy_until(int lane) const {
    return lane < static_cast<int>(lane_busy_until_.size()) ? lane_busy_until_[lane] : 0.0;
  }

  const Schedule& schedule_;
  const std::vector<StageCosts>& stages_;
  const std::vector<std::vector<double>>& transfer_ms_;
  const std::vector<std::vector<int64_t>>& transfer_bytes_;
  Timeline timeline_;
  std::vector<double> lane_free_;        // compute lanes
  std::vector<double> lane_busy_until_;  // every lane by index (links, all-reduce lanes)
  std::vector<int> allreduce_lane_;
  std::map<std::pair<int, int>, int> link_lane_;
  std::map<TransferKey, double> arrivals_;
  std::vector<size_t> pc_;
  std::vector<double> allreduce_done_;
  std::vector<int> in_flight_;
  std::vector<std::pair<int, int>> last_backward_;
  std::vector<std::vector<double>> place_free_;  // per compute pool, per place: when it is free
};

}  // namespace

Timeline run_programs(const Schedule& schedule, const std::vector<StageCosts>& stages,
                      const std::vector<std::vector<double>>& transfer_ms,
                      const std::vector<std::vector<int64_t>>& transfer_bytes, const std::vector<int>& pool_places) {
  return Engine(schedule, stages, transfer_ms, transfer_bytes, pool_places).run();
}

}  // namespace baton::parallel::sim
