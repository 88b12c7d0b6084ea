// Min-max dynamic programming over nested cut states (block and antichain partitioners), with
// lower-bound pruning that keeps it exact: a candidate stage is costed only when its compute time
// alone could still beat the best candidate found so far.
#include "parallel/plan/stage_dp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "parallel/plan/cost_model.h"
#include "runtime/core/error.h"
#include "runtime/core/stop_request.h"

namespace baton::parallel {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Metric { time, memory };

// One DP over up to `stages` stages. Cell (k, j, d): the best bottleneck of k stages covering state j
// on d devices; a stage from state i to j with r replicas extends cell (k - 1, i, d - r). With
// `any_count` the pipeline may end after any k <= stages (free replication); otherwise after exactly
// `stages`. A stage's memory is checked with the micro-batches it holds in flight: for an exact count
// of stages the schedule's figure; with any_count the largest over the admissible counts, which is
// exact whenever the cap rejects nothing (the caller then falls back to one DP per count).
class StageDp {
 public:
  StageDp(const PartitionRequest& request, const CutStates& states, Metric metric, int stages, bool any_count)
      : req_(request),
        profile_(*request.profile),
        states_(states),
        metric_(metric),
        stages_(stages),
        any_count_(any_count) {
    micro_batch_ = static_cast<double>(req_.batch) / req_.micro_batches;
    cap_ = memory_cap_bytes(req_);
    if (req_.free_replication) {
      max_devices_ = req_.devices;
      for (int r = 1; r <= max_devices_; ++r) {
        if (req_.micro_batches % r == 0) replica_options_.push_back(r);  // replicas take whole micro-batches
      }
    } else {
      max_devices_ = stages * req_.replicas;
      replica_options_ = {req_.replicas};
      Plan layout;  // the devices assign_devices will give each stage
      layout.chunks_per_device = req_.chunks_per_device;
      layout.stages.assign(static_cast<size_t>(stages), Stage{{}, req_.replicas, {}});
      assign_devices(layout);
      for (const Stage& s : layout.stages) first_device_.push_back(s.devices.front());
    }
    for (int s = 0; s < stages_; ++s) {
      int in_flight = in_flight_bound(req_, s, stages_, 1);  // capped by M / r for r replicas (held())
      for (int count = s + 1; any_count_ && count < stages_; ++count) {
        in_flight = std::max(in_flight, in_flight_bound(req_, s, count, 1));
      }
      in_flight_.push_back(in_flight);
    }
    lower_bound_.assign(static_cast<size_t>(replica_options_.back()) + 1, {});
    for (int r : replica_options_) {
      std::vector<double> weight(static_cast<size_t>(profile_.num_nodes()));
      for (int n = 0; n < profile_.num_nodes(); ++n) {  // r replicas share the micro-batches
        weight[n] = metric_ == Metric::time ? (profile_.fwd_ms(n, micro_batch_) + profile_.bwd_ms(n, micro_batch_)) / r
                                            : static_cast<double>(profile_.nodes[n].param_bytes);
      }
      auto& prefix = lower_bound_[r];
      prefix.assign(static_cast<size_t>(states_.num_states()), 0.0);
      for (int st = 0; st < states_.num_states(); ++st) {
        for (int n = 0; n < profile_.num_nodes(); ++n) {
          if (states_.contains(st, n)) prefix[st] += weight[n];
        }
      }
    }
  }

  // Fills the table; returns the best bottleneck (kInf when nothing fits).
  double solve() {
    const int num_states = states_.num_states(), full = states_.full_state(), n = states_.num_nodes();
    const size_t cells = static_cast<size_t>(stages_ + 1) * num_states * (max_devices_ + 1);
    best_.assign(cells, kInf);
    from_state_.assign(cells, -1);
    from_replicas_.assign(cells, 0);
    best_[cell(0, states_.empty_state(), 0)] = 0;
    for (int k = 1; k <= stages_; ++k) {
      check_stop_request("planning the pipeline");  // a row of a big model's states takes a while
      for (int j = 1; j < num_states; ++j) {
        if (!any_count_ && (k == stages_) != (j == full)) continue;
        // Stages still to come, at least (each needs a node and a device).
        const int after = any_count_ ? (j == full ? 0 : 1) : stages_ - k;
        if (states_.size(j) < k || n - states_.size(j) < after) continue;
        for (int d = k; d <= max_devices_ - after; ++d) fill(k, j, d, j == full);
      }
    }
    double result = kInf;
    for (int k = any_count_ ? 1 : stages_; k <= stages_; ++k) {
      for (int d = req_.all_devices ? max_devices_ : 1; d <= max_devices_; ++d) {
        const double v = best_[cell(k, full, d)];
        if (v < result) {
          result = v;
          best_stages_ = k;
          best_devices_ = d;
        }
      }
    }
    return result;
  }

  // Candidates a memory cap rejected (see the class comment).
  long cap_rejections() const { return cap_rejections_; }

  // The stages of the optimum found by solve(): (inner state, outer state, replicas) per stage.
  struct Choice {
    int inner, outer, replicas;
  };
  std::vector<Choice> choices() const {
    std::vector<Choice> out(static_cast<size_t>(best_stages_));
    int j = states_.full_state(), d = best_devices_;
    for (int k = best_stages_; k >= 1; --k) {
      const size_t c = cell(k, j, d);
      out[k - 1] = {from_state_[c], j, from_replicas_[c]};
      d -= from_replicas_[c];
      j = from_state_[c];
    }
    return out;
  }

 private:
  struct Candidate {
    double bound;  // lower bound of the value the candidate can reach
    int i, r;
  };

  size_t cell(int k, int j, int d) const {
    return (static_cast<size_t>(k) * states_.num_states() + j) * (max_devices_ + 1) + d;
  }

  // Candidates (i, r) are costed in the order of a lower bound of their value — max(the prefix's
  // bottleneck, this stage's compute or parameter bytes alone, slightly loosened for rounding) — and
  // only while that bound can still beat the best found: usually one or two per cell are costed.
  void fill(int k, int j, int d, bool last) {
    candidates_.clear();
    for (int r : replica_options_) {
      const int prev_d = d - r;
      if (prev_d < k - 1) continue;
      if (!req_.free_replication && prev_d != (k - 1) * r) continue;
      const auto& bound = lower_bound_[r];
      for (int i : states_.inner_states(j)) {
        const double before = best_[cell(k - 1, i, prev_d)];
        if (before == kInf) continue;
        candidates_.push_back({std::max(before, (bound[j] - bound[i]) * (1 - 1e-9) - 1e-12), i, r});
      }
    }
    const int s = k - 1;
    double cur = kInf;
    int arg_i = -1, arg_r = 0;
    auto consider = [&](const Candidate& c) {
      const int prev_d = d - c.r;
      const double before = best_[cell(k - 1, c.i, prev_d)];
      const std::vector<int> nodes = states_.stage_nodes(c.i, j);
      const int held = std::min(in_flight_[s], req_.micro_batches / c.r);  // by one replica
      double v = 0;
      if (metric_ == Metric::time) {
        const int first = req_.free_replication ? prev_d : first_device_[s];
        const int next = last ? -1 : (req_.free_replication ? d : first_device_[s + 1]);
        v = std::max(before, stage_time_ms(req_, nodes, c.r, first, next));
        if (v >= cur) return;
        if (static_cast<double>(stage_memory(profile_, nodes, micro_batch_, held).total()) > cap_) {
          ++cap_rejections_;
          return;
        }
      } else {
        v = std::max(before, static_cast<double>(stage_memory(profile_, nodes, micro_batch_, held).total()));
        if (v >= cur) return;
      }
      cur = v;
      arg_i = c.i;
      arg_r = c.r;
    };
    if (!candidates_.empty()) {
      // The most promising candidate first, then only those whose bound beats it, in bound order.
      const Candidate first =
          *std::min_element(candidates_.begin(), candidates_.end(),
                            [](const Candidate& a, const Candidate& b) { return a.bound < b.bound; });
      consider(first);
      std::erase_if(candidates_, [&](const Candidate& c) { return c.bound >= cur; });
      std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
        return a.bound != b.bound ? a.bound < b.bound : (a.r != b.r ? a.r < b.r : a.i < b.i);
      });
      for (const Candidate& c : candidates_) {
        if (c.bound >= cur) break;
        if (c.i != first.i || c.r != first.r) consider(c);
      }
    }
    const size_t c = cell(k, j, d);
    best_[c] = cur;
    from_state_[c] = arg_i;
    from_replicas_[c] = arg_r;
  }

  const PartitionRequest& req_;
  const Profile& profile_;
  const CutStates& states_;
  Metric metric_;
  int stages_;
  bool any_count_;
  double micro_batch_ = 1;
  double cap_ = kInf;
  int max_devices_ = 1;
  int best_stages_ = 0;
  int best_devices_ = 0;
  long cap_rejections_ = 0;
  std::vector<int> replica_options_;
  std::vector<int> first_device_;                 // equal replication: stage s's first device
  std::vector<int> in_flight_;                    // per stage: micro-batches held for memory (one replica)
  std::vector<std::vector<double>> lower_bound_;  // per replica count: prefix sums over states
  std::vector<double> best_;
  std::vector<int> from_state_;
  std::vector<int> from_replicas_;
  std::vector<Candidate> candidates_;
};

// The optimum over every admissible stage count (free replication: 1..stages, devices permitting;
// otherwise exactly request.stages). Returns kInf when nothing fits the memory cap.
double solve_all(const PartitionRequest& request, const CutStates& states, Metric metric,
                 std::vector<StageDp::Choice>* choices) {
  if (!request.free_replication) {
    StageDp dp(request, states, metric, request.stages, false);
    const double v = dp.solve();
    if (choices != nullptr && v < kInf) *choices = dp.choices();
    return v;
  }
  const int max_stages = std::min(request.stages, request.devices);
  if (metric == Metric::time) {
    // One DP for all stage counts; exact unless the cap rejected a stage with the largest in-flight
    // count, in which case one DP per count decides.
    StageDp dp(request, states, metric, max_stages, true);
    const double v = dp.solve();
    if (dp.cap_rejections() == 0) {
      if (choices != nullptr && v < kInf) *choices = dp.choices();
      return v;
    }
  }
  double best = kInf;
  for (int stages = 1; stages <= max_stages; ++stages) {
    StageDp dp(request, states, metric, stages, false);
    const double v = dp.solve();
    if (v < best) {
      best = v;
      if (choices != nullptr) *choices = dp.choices();
    }
  }
  return best;
}

}  // namespace

Plan partition_over_cut_states(const PartitionRequest& request, const CutStates& states,
                               const std::string& partitioner) {
  check_request(request);
  BATON_CHECK(!request.free_replication || request.chunks_per_device == 1, "partition ", partitioner,
              ": free replication places stages on consecutive devices; it cannot be combined with ",
              request.chunks_per_device, " chunks per device");
  const Profile& profile = *request.profile;
  std::vector<StageDp::Choice> choices;
  const double bottleneck = solve_all(request, states, Metric::time, &choices);
  if (!std::isfinite(bottleneck)) {
    BATON_CHECK(!request.all_devices || std::isfinite(solve_all(request, states, Metric::memory, nullptr)),
                "partition ", partitioner, ": no split of '", profile.model, "' into at most ", request.stages,
                " stages uses exactly ", request.devices, " devices with replica counts that divide the step's ",
                request.micro_batches, " micro-batches (try another number of processes or micro-batches)");
    const double peak = solve_all(request, states, Metric::memory, nullptr);
    const double cap = memory_cap_bytes(request);
    BATON_FAIL("partition ", partitioner, ": no split of '", profile.model, "' into ",
               request.free_replication ? "at most " : "", request.stages, " stages fits the memory cap of ", cap / 1e9,
               " GB (", static_cast<int64_t>(cap), " bytes) per device; the smallest achievable peak is ", peak / 1e9,
               " GB (", static_cast<int64_t>(peak),
               " bytes) per device (try more stages or devices, more micro-batches or a smaller batch)");
  }
  Plan plan;
  plan.model = profile.model;
  plan.partitioner = partitioner;
  plan.batch = request.batch;
  plan.micro_batches = request.micro_batches;
  plan.chunks_per_device = request.chunks_per_device;
  for (const StageDp::Choice& c : choices) {
    Stage stage;
    stage.nodes = states.stage_nodes(c.inner, c.outer);
    stage.replicas = c.replicas;
    plan.stages.push_back(std::move(stage));
  }
  assign_devices(plan);
  validate_plan(plan, profile);
  return plan;
}

}  // namespace baton::parallel
