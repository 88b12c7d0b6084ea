// The simulator's event engine: takes the earliest event, either the start of a replica lane's next
// instruction or the end of a computation, so every shared lane (links, all-reduce lanes) is claimed
// in time order. Computations of a compute pool share its places as the kernel's scheduler shares
// cores: n of them on p places each progress at min(1, p / n) of their speed.
#include "parallel/plan/simulator_engine.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "parallel/plan/simulator_sharing.h"
#include "runtime/core/error.h"

namespace baton::parallel::sim {

namespace {

// (gradient?, sending stage, receiving stage, micro-batch) -> arrival time.
using TransferKey = std::tuple<int, int, int, int>;

// A stage's gradient all-reduce: its replicas reach it one by one; it starts with the last.
struct Reduction {
  int arrived = 0;
  double ready = 0;
  bool done = false;
  double done_ms = 0;
};

class Engine {
 public:
  Engine(const Schedule& schedule, const std::vector<StageCosts>& stages,
         const std::vector<std::vector<int64_t>>& transfer_bytes, const TransferTime& transfer_ms,
         const std::vector<int>& pool_places)
      : schedule_(schedule),
        stages_(stages),
        transfer_bytes_(transfer_bytes),
        transfer_ms_(transfer_ms),
        shared_(pool_places) {
    for (int s = 0; s < schedule.stages; ++s) {
      const StageCosts& c = stages[s];
      BATON_CHECK(static_cast<int>(c.devices.size()) == schedule.replicas_of(s), "simulate: stage ", s, " has ",
                  c.devices.size(), " devices for ", schedule.replicas_of(s), " replicas");
      for (const int pool : c.pools) {
        BATON_CHECK(pool < shared_.pools(), "simulate: compute pool ", pool, " of ", shared_.pools());
      }
    }
    for (int p = 0; p < schedule.devices; ++p) {
      for (int k = 0; k < schedule.replicas_of(p); ++k) {
        timeline_.lanes.push_back({LaneKind::compute, p, k, -1, -1});
        programs_.push_back(replica_program(schedule, p, k));
      }
    }
    const size_t lanes = programs_.size();
    timeline_.compute_lanes = static_cast<int>(lanes);
    lane_free_.assign(lanes, 0.0);
    computing_.assign(lanes, false);
    pc_.assign(lanes, 0);
    in_flight_.assign(lanes, std::vector<int>(static_cast<size_t>(schedule.stages), 0));
    last_backward_.assign(lanes, std::vector<int>(static_cast<size_t>(schedule.stages), -1));
    for (size_t l = 0; l < lanes; ++l) {
      for (int i = 0; i < static_cast<int>(programs_[l].size()); ++i) {
        if (programs_[l][i].op == Op::backward) last_backward_[l][programs_[l][i].stage] = i;
      }
    }
    allreduce_lane_.assign(schedule.devices, -1);
    reductions_.assign(schedule.stages, {});
    timeline_.peak_in_flight.assign(schedule.stages, 0);
  }

  Timeline run() {
    for (;;) {
      int best = -1;
      double best_time = std::numeric_limits<double>::infinity();
      bool remaining = false;
      for (int l = 0; l < static_cast<int>(programs_.size()); ++l) {
        if (pc_[l] >= programs_[l].size()) continue;
        remaining = true;
        if (computing_[l]) continue;
        const std::optional<double> t = ready_time(l, programs_[l][pc_[l]]);
        if (t && *t < best_time) {
          best = l;
          best_time = *t;
        }
      }
      const auto [finishing, finish_time] = shared_.next_finish();
      if (!remaining && finishing < 0) break;
      if (finishing >= 0 && finish_time <= best_time) {
        shared_.advance(finish_time);
        finish_computation(static_cast<size_t>(finishing));
        continue;
      }
      BATON_CHECK(best >= 0, "simulate: no pipeline replica can proceed (every one waits for a transfer)");
      shared_.advance(best_time);
      execute(best, shared_.now());
      ++pc_[best];
    }
    return std::move(timeline_);
  }

 private:
  std::optional<double> ready_time(int l, const Instruction& in) const {
    switch (in.op) {
      case Op::recv_activation:
        return arrival({0, in.peer, in.stage, in.micro_batch}, l);
      case Op::recv_gradient:
        return arrival({1, in.peer, in.stage, in.micro_batch}, l);
      case Op::optimizer_step: {
        const Reduction& r = reductions_[in.stage];
        if (stages_[in.stage].all_reduce && !r.done) return std::nullopt;  // waits for every replica
        return std::max(lane_free_[l], r.done_ms);
      }
      default:
        return lane_free_[l];
    }
  }

  int pool_of(int l, int stage) const {
    const std::vector<int>& pools = stages_[stage].pools;
    return pools.empty() ? -1 : pools[static_cast<size_t>(timeline_.lanes[l].replica)];
  }

  std::optional<double> arrival(const TransferKey& key, int l) const {
    const auto it = arrivals_.find(key);
    if (it == arrivals_.end()) return std::nullopt;
    return std::max(lane_free_[l], it->second);
  }

  void execute(int l, double t) {
    const Instruction& in = programs_[l][pc_[l]];
    const StageCosts& stage = stages_[in.stage];
    const int position = timeline_.lanes[l].position;
    switch (in.op) {
      case Op::forward: {
        compute(l, Activity::forward, in, t, stage.fwd_ms);
        const int count = ++in_flight_[l][in.stage];
        timeline_.peak_in_flight[in.stage] = std::max(timeline_.peak_in_flight[in.stage], count);
        break;
      }
      case Op::backward:
        compute(l, Activity::backward, in, t, stage.bwd_ms);
        --in_flight_[l][in.stage];
        break;
      case Op::send_activation:
        send(0, in, t);
        break;
      case Op::send_gradient:
        send(1, in, t);
        break;
      case Op::recv_activation:
      case Op::recv_gradient:
        lane_free_[l] = t;  // compute waits for the arrival
        break;
      case Op::all_reduce:
        if (stage.all_reduce && stage.buckets.empty() && arrive(in.stage, t)) {
          finish(in.stage,
                 reduce(position, in.stage, reductions_[in.stage].ready, stage.allreduce_ms, stage.param_bytes, -1));
        }  // bucketed: started by the last backwards; nothing to reduce: no wait
        break;
      case Op::optimizer_step:
        compute(l, Activity::optimizer, in, t, stage.optimizer_ms);
        break;
    }
  }

  // One more replica of `stage` reached its all-reduce at t; true when it was the last.
  bool arrive(int stage, double t) {
    Reduction& r = reductions_[stage];
    r.ready = std::max(r.ready, t);
    return ++r.arrived == schedule_.replicas_of(stage);
  }

  void finish(int stage, double done_ms) {
    reductions_[stage].done = true;
    reductions_[stage].done_ms = done_ms;
  }

  // Starts a computation of `ms` at full speed; the lane waits until finish_computation.
  void compute(int l, Activity activity, const Instruction& in, double t, double ms) {
    shared_.start({l, pool_of(l, in.stage), timeline_.intervals.size(), static_cast<int>(pc_[l]), ms});
    timeline_.intervals.push_back({l, activity, t, t, in.stage, in.micro_batch, -1, -1, 0});
    computing_[l] = true;
  }

  void finish_computation(size_t index) {
    const SharedCompute::Running done = shared_.finish(index);
    lane_free_[done.lane] = shared_.now();
    computing_[done.lane] = false;
    // A copy: reduce() below adds intervals.
    const Interval computed = timeline_.intervals[done.interval];
    timeline_.intervals[done.interval].end_ms = shared_.now();
    const StageCosts& stage = stages_[computed.stage];
    if (computed.activity != Activity::backward || !stage.all_reduce || stage.buckets.empty() ||
        last_backward_[done.lane][computed.stage] != done.pc) {
      return;
    }
    // Bucket b is final once every replica's last backward has run b's share (its offset stretched as
    // the backward was).
    const double stretch = stage.bwd_ms > 0 ? (shared_.now() - computed.start_ms) / stage.bwd_ms : 1.0;
    if (!arrive(computed.stage, computed.start_ms)) return;
    const int position = timeline_.lanes[done.lane].position;
    double finished = 0;
    for (int b = 0; b < static_cast<int>(stage.buckets.size()); ++b) {
      const Bucket& bucket = stage.buckets[b];
      finished = reduce(position, computed.stage, reductions_[computed.stage].ready + bucket.ready_ms * stretch,
                        bucket.allreduce_ms, bucket.bytes, b);
    }
    finish(computed.stage, finished);
  }

  // Queues an all-reduce on position p's all-reduce lane (FIFO); returns when it completes.
  double reduce(int p, int stage, double ready, double ms, int64_t bytes, int bucket) {
    if (allreduce_lane_[p] < 0) {
      allreduce_lane_[p] = static_cast<int>(timeline_.lanes.size());
      timeline_.lanes.push_back({LaneKind::allreduce, p, 0, -1, -1});
      lane_busy_until_.resize(timeline_.lanes.size(), 0.0);
    }
    const int lane = allreduce_lane_[p];
    const double start = std::max(ready, busy_until(lane));
    lane_busy_until_[lane] = start + ms;
    timeline_.intervals.push_back({lane, Activity::allreduce, start, start + ms, stage, -1, -1, bucket, bytes});
    return start + ms;
  }

  // Asynchronous: the transfer waits for its link (FIFO per ordered device pair), the sender does not.
  // Micro-batch m travels between the replicas that take it: m mod r on either side.
  void send(int gradient, const Instruction& in, double t) {
    const std::vector<int>& mine = stages_[in.stage].devices;
    const std::vector<int>& theirs = stages_[in.peer].devices;
    const int from = mine[static_cast<size_t>(in.micro_batch) % mine.size()];
    const int to = theirs[static_cast<size_t>(in.micro_batch) % theirs.size()];
    const int64_t bytes = transfer_bytes_[in.stage][in.peer];
    double arrival = t;
    if (from != to) {
      const auto [it, added] = link_lane_.try_emplace({from, to}, static_cast<int>(timeline_.lanes.size()));
      if (added) {
        timeline_.lanes.push_back({LaneKind::link, -1, 0, from, to});
        lane_busy_until_.resize(timeline_.lanes.size(), 0.0);
      }
      const int lane = it->second;
      const double start = std::max(t, busy_until(lane));
      arrival = start + transfer_ms_(bytes, from, to);
      lane_busy_until_[lane] = arrival;
      timeline_.intervals.push_back({lane, gradient ? Activity::send_gradient : Activity::send_activation, start,
                                     arrival, in.stage, in.micro_batch, in.peer, -1, bytes});
    }
    arrivals_[{gradient, in.stage, in.peer, in.micro_batch}] = arrival;
  }

  double busy_until(int lane) const {
    return lane < static_cast<int>(lane_busy_until_.size()) ? lane_busy_until_[lane] : 0.0;
  }

  const Schedule& schedule_;
  const std::vector<StageCosts>& stages_;
  const std::vector<std::vector<int64_t>>& transfer_bytes_;
  const TransferTime& transfer_ms_;
  Timeline timeline_;
  std::vector<std::vector<Instruction>> programs_;  // per compute lane
  std::vector<double> lane_free_;                   // compute lanes
  std::vector<double> lane_busy_until_;             // every lane by index (links, all-reduce lanes)
  std::vector<int> allreduce_lane_;                 // per position
  std::map<std::pair<int, int>, int> link_lane_;
  std::map<TransferKey, double> arrivals_;
  std::vector<size_t> pc_;
  std::vector<Reduction> reductions_;            // per stage
  std::vector<std::vector<int>> in_flight_;      // [lane][stage]
  std::vector<std::vector<int>> last_backward_;  // [lane][stage]: index of its last backward
  SharedCompute shared_;                         // the computations under way, and the clock
  std::vector<bool> computing_;                  // per compute lane
};

}  // namespace

Timeline run_programs(const Schedule& schedule, const std::vector<StageCosts>& stages,
                      const std::vector<std::vector<int64_t>>& transfer_bytes, const TransferTime& transfer_ms,
                      const std::vector<int>& pool_places) {
  return Engine(schedule, stages, transfer_bytes, transfer_ms, pool_places).run();
}

}  // namespace baton::parallel::sim
