// Brute-force baselines for the block and antichain partitioners: enumerate every contiguous split,
// or every assignment of nodes to ordered stages with no value flowing backward (and, with free
// replication, every replica vector), and cost each with stage_time_ms and stage_memory directly.
#pragma once

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "parallel/plan/cost_model.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/plan.h"

namespace baton::parallel::dag_fixtures {

struct BruteForce {
  double best_ms = std::numeric_limits<double>::infinity();   // over splits within the memory cap
  double min_peak = std::numeric_limits<double>::infinity();  // smallest peak stage memory, any split
  double max_peak = 0;                                        // largest peak stage memory, any split
  int splits = 0;
  int over_cap = 0;  // splits rejected by the memory cap
};

// Costs one split: devices from assign_devices with equal replication, consecutive devices with free
// replication; bottleneck = slowest stage_time_ms; peak = largest stage_memory (the schedule's
// in-flight micro-batches).
inline void consider(const PartitionRequest& r, const std::vector<std::vector<int>>& stages,
                     const std::vector<int>& replicas, BruteForce& out) {
  const int count = static_cast<int>(stages.size());
  std::vector<int> first(count);
  if (r.free_replication) {
    for (int s = 0, d = 0; s < count; d += replicas[s], ++s) first[s] = d;
  } else {
    Plan plan;
    plan.chunks_per_device = r.chunks_per_device;
    for (int s = 0; s < count; ++s) plan.stages.push_back(Stage{stages[s], replicas[s], {}});
    assign_devices(plan);
    for (int s = 0; s < count; ++s) first[s] = plan.stages[s].devices.front();
  }
  const double cap = memory_cap_bytes(r);
  double worst = 0, peak = 0;
  for (int s = 0; s < count; ++s) {
    const int next = s + 1 < count ? first[s + 1] : -1;
    worst = std::max(worst, stage_time_ms(r, stages[s], replicas[s], first[s], next));
    const double batch = static_cast<double>(r.batch) / r.micro_batches;  // a replica computes whole ones
    const int held = in_flight_bound(r, s, count, replicas[s]);
    peak = std::max(peak, static_cast<double>(stage_memory(*r.profile, stages[s], batch, held).total()));
  }
  ++out.splits;
  out.min_peak = std::min(out.min_peak, peak);
  out.max_peak = std::max(out.max_peak, peak);
  if (peak > cap) {
    ++out.over_cap;
    return;
  }
  out.best_ms = std::min(out.best_ms, worst);
}

// Every composition of the topological order into `stages` non-empty contiguous stages.
inline BruteForce brute_force_block(const PartitionRequest& r) {
  BruteForce out;
  const int n = r.profile->num_nodes();
  std::vector<int> cuts{0};
  std::function<void()> rec = [&]() {
    const int placed = static_cast<int>(cuts.size()) - 1;
    if (placed == r.stages - 1) {
      std::vector<std::vector<int>> stages;
      cuts.push_back(n);
      for (int s = 0; s < r.stages; ++s) {
        stages.emplace_back();
        for (int k = cuts[s]; k < cuts[s + 1]; ++k) stages.back().push_back(k);
      }
      cuts.pop_back();
      consider(r, stages, std::vector<int>(r.stages, r.replicas), out);
      return;
    }
    for (int c = cuts.back() + 1; c <= n - (r.stages - 1 - placed); ++c) {
      cuts.push_back(c);
      rec();
      cuts.pop_back();
    }
  };
  rec();
  return out;
}

// Every assignment of nodes to `count` ordered non-empty stages such that each node's stage is at
// least the stage of every node it reads from; `visit` gets the stages' node lists.
inline void for_each_dag_split(const Profile& p, int count,
                               const std::function<void(const std::vector<std::vector<int>>&)>& visit) {
  const int n = p.num_nodes();
  std::vector<int> stage_of(n, 0);
  std::function<void(int)> rec = [&](int k) {
    if (k == n) {
      std::vector<std::vector<int>> stages(count);
      for (int m = 0; m < n; ++m) stages[stage_of[m]].push_back(m);
      if (std::any_of(stages.begin(), stages.end(), [](const auto& s) { return s.empty(); })) return;
      visit(stages);
      return;
    }
    int lowest = 0;
    for (int v : p.nodes[k].inputs) {
      if (p.values[v].producer >= 0) lowest = std::max(lowest, stage_of[p.values[v].producer]);
    }
    for (int s = lowest; s < count; ++s) {
      stage_of[k] = s;
      rec(k + 1);
    }
  };
  rec(0);
}

// Equal replication: exactly r.stages stages of r.replicas. Free replication: 1..r.stages stages, each
// with a replica count dividing the step's micro-batches, r.devices devices at most in all.
inline BruteForce brute_force_dag(const PartitionRequest& r) {
  BruteForce out;
  if (!r.free_replication) {
    for_each_dag_split(*r.profile, r.stages, [&](const std::vector<std::vector<int>>& stages) {
      consider(r, stages, std::vector<int>(r.stages, r.replicas), out);
    });
    return out;
  }
  for (int count = 1; count <= std::min(r.stages, r.devices); ++count) {
    for_each_dag_split(*r.profile, count, [&](const std::vector<std::vector<int>>& stages) {
      std::vector<int> reps;
      std::function<void(int)> rec = [&](int used) {
        if (static_cast<int>(reps.size()) == count) {
          consider(r, stages, reps, out);
          return;
        }
        for (int k = 1; used + k + (count - 1 - static_cast<int>(reps.size())) <= r.devices; ++k) {
          if (r.micro_batches % k != 0) continue;  // replicas take whole micro-batches
          reps.push_back(k);
          rec(used + k);
          reps.pop_back();
        }
      };
      rec(0);
    });
  }
  return out;
}

}  // namespace baton::parallel::dag_fixtures
