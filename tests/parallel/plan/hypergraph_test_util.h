// Helpers for the hypergraph partitioner's tests: small profiles from explicit or random DAGs,
// independent checks of a plan's structure (no partitioner code used), the requests the tests make
// and a log kept quiet.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "parallel/plan/cluster.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/plan.h"
#include "parallel/plan/profile.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"
#include "tests/parallel/plan/empty_profile.h"

namespace baton::parallel::testing {

// Node i takes ms[i] (forward a third, backward two thirds, per sample), reads the outputs of
// inputs[i] (-1: the graph input "x") and writes one value of bytes[i] per sample.
struct DagSpec {
  std::vector<double> ms;
  std::vector<std::vector<int>> inputs;
  std::vector<int64_t> bytes;
};

inline Profile make_profile(const DagSpec& spec) {
  Profile p = fixtures::empty_profile("dag", {1});
  const int n = static_cast<int>(spec.ms.size());
  p.values.push_back({"x", -1, {}, 1000, false});
  for (int i = 0; i < n; ++i) {
    ProfiledNode node;
    node.name = detail::concat("n", i);
    node.type = "Test";
    node.fwd_ms = {spec.ms[i] / 3};
    node.bwd_ms = {spec.ms[i] * 2 / 3};
    std::set<int> inputs(spec.inputs[i].begin(), spec.inputs[i].end());
    for (int src : inputs) {
      node.inputs.push_back(src + 1);
      p.values[src + 1].consumers.push_back(i);
    }
    node.outputs = {i + 1};
    p.nodes.push_back(node);
    ProfiledValue out;
    out.name = node.name + ".out";
    out.producer = i;
    out.bytes_per_sample = spec.bytes[i];
    out.graph_output = i == n - 1;
    p.values.push_back(out);
  }
  p.validate("test profile");
  return p;
}

// A random DAG in topological order: mostly chains, with branches (a node starting from an earlier
// one instead of its predecessor) and skips (an extra input from up to 20 nodes back); every value
// but the last is read. Times 0.05-2 ms (a few 10x heavier), values 1 KB - 1 MB per sample.
inline DagSpec random_dag(int n, std::mt19937& rng) {
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * (rng() / 4294967296.0); };
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
  DagSpec spec;
  spec.ms.resize(n);
  spec.inputs.resize(n);
  spec.bytes.resize(n);
  for (int i = 0; i < n; ++i) {
    spec.ms[i] = uniform(0.05, 2.0) * (uniform(0, 1) < 0.03 ? 10 : 1);
    spec.bytes[i] = static_cast<int64_t>(std::pow(10.0, uniform(3, 6)));
    if (i == 0) {
      spec.inputs[i] = {-1};
      continue;
    }
    if (uniform(0, 1) < 0.8) spec.inputs[i].push_back(i - 1);
    if (spec.inputs[i].empty() || uniform(0, 1) < 0.3) spec.inputs[i].push_back(pick(std::max(0, i - 20), i - 1));
  }
  std::vector<char> read(n, 0);
  for (int i = 0; i < n; ++i) {
    for (int src : spec.inputs[i]) {
      if (src >= 0) read[src] = 1;
    }
  }
  for (int j = 0; j + 1 < n; ++j) {
    if (!read[j]) spec.inputs[std::min(n - 1, j + pick(1, 6))].push_back(j);
  }
  return spec;
}

// Stage of every node (asserting each is in exactly one stage), or empty on failure.
inline std::vector<int> stage_of_nodes(const Plan& plan, const Profile& profile) {
  std::vector<int> stage_of(profile.num_nodes(), -1);
  for (int s = 0; s < plan.num_stages(); ++s) {
    EXPECT_FALSE(plan.stages[s].nodes.empty()) << "stage " << s << " is empty";
    for (int v : plan.stages[s].nodes) {
      EXPECT_EQ(stage_of[v], -1) << "node " << v << " in two stages";
      stage_of[v] = s;
    }
  }
  for (int v = 0; v < profile.num_nodes(); ++v) EXPECT_GE(stage_of[v], 0) << "node " << v << " in no stage";
  return stage_of;
}

// The quotient graph of stages is acyclic (Kahn's algorithm on it) and the stage order is one of
// its topological orders (no value flows from a later stage to an earlier one).
inline void expect_acyclic_stages(const Plan& plan, const Profile& profile) {
  const std::vector<int> stage_of = stage_of_nodes(plan, profile);
  const int k = plan.num_stages();
  std::set<std::pair<int, int>> edges;
  for (const ProfiledValue& value : profile.values) {
    if (value.producer < 0) continue;
    for (int c : value.consumers) {
      const int a = stage_of[value.producer];
      const int b = stage_of[c];
      EXPECT_LE(a, b) << "value " << value.name << " flows from stage " << a << " back to stage " << b;
      if (a != b) edges.insert({a, b});
    }
  }
  std::vector<int> indegree(k, 0);
  for (const auto& [a, b] : edges) ++indegree[b];
  std::vector<int> ready;
  for (int s = 0; s < k; ++s) {
    if (indegree[s] == 0) ready.push_back(s);
  }
  int seen = 0;
  while (!ready.empty()) {
    const int s = ready.back();
    ready.pop_back();
    ++seen;
    for (const auto& [a, b] : edges) {
      if (a == s && --indegree[b] == 0) ready.push_back(b);
    }
  }
  EXPECT_EQ(seen, k) << "the quotient graph of stages has a cycle";
}

// Bytes per sample crossing stages: each value counted once per stage, other than its producer's,
// that reads it; and each stage's forward + backward ms per sample.
inline int64_t crossing_bytes_per_sample(const Plan& plan, const Profile& profile) {
  const std::vector<int> stage_of = stage_of_nodes(plan, profile);
  int64_t bytes = 0;
  for (const ProfiledValue& value : profile.values) {
    if (value.producer < 0) continue;
    std::set<int> readers;
    for (int c : value.consumers) {
      if (stage_of[c] != stage_of[value.producer]) readers.insert(stage_of[c]);
    }
    bytes += value.bytes_per_sample * static_cast<int64_t>(readers.size());
  }
  return bytes;
}

inline std::vector<double> stage_ms_per_sample(const Plan& plan, const Profile& profile) {
  std::vector<double> ms;
  for (const Stage& stage : plan.stages) {
    double total = 0;
    for (int v : stage.nodes) total += profile.nodes[v].fwd_ms[0] + profile.nodes[v].bwd_ms[0];
    ms.push_back(total);
  }
  return ms;
}

inline const Cluster& hypergraph_test_cluster() {
  static const Cluster cluster = cluster_by_name("h200-nvlink-8");
  return cluster;
}

// A request for `stages` stages of `profile` on the h200-nvlink-8 cluster: batch 32 in 4 micro-batches.
inline PartitionRequest request_for(const Profile& profile, int stages, unsigned seed = 1) {
  PartitionRequest r;
  r.profile = &profile;
  r.cluster = &hypergraph_test_cluster();
  r.stages = stages;
  r.batch = 32;
  r.micro_batches = 4;
  r.seed = seed;
  return r;
}

// Relaxed-bound warnings are expected in these tests; keeps them off the test output (unless
// BATON_LOG=debug asks for everything).
class QuietLog {
 public:
  QuietLog() : saved_(log_level()) {
    if (saved_ != LogLevel::debug) set_log_level(LogLevel::error);
  }
  ~QuietLog() { set_log_level(saved_); }
  QuietLog(const QuietLog&) = delete;
  QuietLog& operator=(const QuietLog&) = delete;

 private:
  LogLevel saved_;
};

inline double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
inline double mean_of(const std::vector<double>& v) {
  double total = 0;
  for (double x : v) total += x;
  return total / static_cast<double>(v.size());
}

}  // namespace baton::parallel::testing
