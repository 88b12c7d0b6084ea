// Hand-built profiles for the partitioner tests: random chains and random branching DAGs with random
// times and byte sizes, ResNet-like block graphs, and a small test cluster.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "parallel/plan/cluster.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/profile.h"
#include "runtime/core/error.h"
#include "tests/parallel/plan/empty_profile.h"

namespace baton::parallel::dag_fixtures {

// Node k of `inputs[k]` reads the outputs of those earlier nodes (-1: the graph's data input). The last
// node also reads the labels. Times at batch sizes 1, 4, 16 grow with the batch (a fixed overhead plus
// a per-sample part); bytes are random but never zero.
inline Profile make_profile(const std::vector<std::vector<int>>& inputs, std::mt19937& rng,
                            const std::string& model = "random") {
  std::uniform_real_distribution<double> overhead(0.01, 0.2), per_sample(0.02, 0.5), bwd_factor(1.2, 2.5);
  std::uniform_int_distribution<int64_t> params(0, 2'000'000), activation(1'000, 200'000), saved(0, 100'000),
      workspace(0, 5'000'000);
  Profile p = fixtures::empty_profile(model, {1, 4, 16});
  p.optimizer_state_factor = 1;
  const int n = static_cast<int>(inputs.size());
  p.values.push_back({"data", -1, {}, 3 * 32 * 32 * 4, false});
  p.values.push_back({"labels", -1, {}, 8, false});
  for (int k = 0; k < n; ++k) {
    ProfiledNode node;
    node.name = detail::concat("node", k);
    node.type = "test";
    const double fixed = overhead(rng), slope = per_sample(rng), factor = bwd_factor(rng);
    for (int b : p.batch_sizes) {
      node.fwd_ms.push_back(fixed + slope * b);
      node.bwd_ms.push_back(factor * (fixed + slope * b));
    }
    node.param_bytes = params(rng);
    node.saved_bytes_per_sample = saved(rng);
    node.workspace_bytes = workspace(rng);
    for (int src : inputs[k]) {
      const int v = src < 0 ? 0 : src + 2;
      if (std::find(node.inputs.begin(), node.inputs.end(), v) == node.inputs.end()) node.inputs.push_back(v);
    }
    if (k == n - 1) node.inputs.push_back(1);
    node.outputs = {k + 2};
    std::string value_name = "out";
    value_name += std::to_string(k);
    p.values.push_back({value_name, k, {}, activation(rng), false});
    p.nodes.push_back(std::move(node));
  }
  for (int k = 0; k < n; ++k) {
    for (int v : p.nodes[k].inputs) p.values[v].consumers.push_back(k);
  }
  for (ProfiledValue& v : p.values) {
    if (v.producer >= 0 && v.consumers.empty()) v.graph_output = true;
  }
  p.validate("test profile");
  return p;
}

inline Profile random_chain(int n, std::mt19937& rng) {
  std::vector<std::vector<int>> inputs;
  for (int k = 0; k < n; ++k) inputs.push_back({k - 1});
  return make_profile(inputs, rng, "chain");
}

// Each node reads one of the three nodes before it and, often, a second earlier node (a join); with
// probability `extra_sources` a node reads only the data input (another source). Branches, joins and
// skips result. Unless `dangling`, every node but the last is read by one of the next three nodes, as
// in a network with one loss (independent sources and sinks multiply the cut states).
inline Profile random_dag(int n, std::mt19937& rng, double extra_sources = 0.1, bool dangling = true) {
  std::vector<std::vector<int>> inputs;
  std::uniform_real_distribution<double> coin(0, 1);
  for (int k = 0; k < n; ++k) {
    if (k == 0 || coin(rng) < extra_sources) {
      inputs.push_back({-1});
      continue;
    }
    std::uniform_int_distribution<int> recent(std::max(0, k - 3), k - 1), any(0, k - 1);
    std::vector<int> in{recent(rng)};
    if (coin(rng) < 0.45) in.push_back(any(rng));
    inputs.push_back(in);
  }
  for (int k = 0; !dangling && k + 1 < n; ++k) {
    bool read = false;
    for (int m = k + 1; m < n; ++m) read = read || std::find(inputs[m].begin(), inputs[m].end(), k) != inputs[m].end();
    if (!read) inputs[std::uniform_int_distribution<int>(k + 1, std::min(n - 1, k + 3))(rng)].push_back(k);
  }
  return make_profile(inputs, rng, "dag");
}

// A ResNet-like graph: a stem, then `blocks` residual blocks of a `main`-node branch and a skip that is
// the identity or, every `downsample_every` blocks, a 2-node projection; an add joins them.
inline Profile resnet_like(int blocks, int main, int downsample_every, std::mt19937& rng) {
  std::vector<std::vector<int>> inputs{{-1}, {0}, {1}};
  for (int b = 0; b < blocks; ++b) {
    const int block_in = static_cast<int>(inputs.size()) - 1;
    int last = block_in;
    for (int m = 0; m < main; ++m) {
      inputs.push_back({last});
      last = static_cast<int>(inputs.size()) - 1;
    }
    int skip = block_in;
    if (b % downsample_every == 0) {
      inputs.push_back({block_in});
      inputs.push_back({static_cast<int>(inputs.size()) - 1});
      skip = static_cast<int>(inputs.size()) - 1;
    }
    inputs.push_back({last, skip});                           // add
    inputs.push_back({static_cast<int>(inputs.size()) - 1});  // relu
  }
  inputs.push_back({static_cast<int>(inputs.size()) - 1});  // pool + fc + loss
  return make_profile(inputs, rng, "resnet_like");
}

// One node of `devices` devices (or two nodes of devices / 2) with slow links, so that activation
// transfers and all-reduces weigh about as much as compute in the random profiles.
inline Cluster test_cluster(int devices, bool two_nodes = false) {
  DeviceSpec spec;
  spec.name = "test";
  spec.memory_gb = 80;
  const Link intra{"nvlink", 2.0, 5};
  const Link inter{"network", 0.5, 20};
  return two_nodes ? Cluster::topology("test-2x", spec, 2, devices / 2, intra, inter)
                   : Cluster::topology("test", spec, 1, devices, intra, inter);
}

// A request to cut `profile` into `stages` stages on `cluster` (the other fields: their defaults).
inline PartitionRequest request_on(const Profile& profile, const Cluster& cluster, int stages) {
  PartitionRequest r;
  r.profile = &profile;
  r.cluster = &cluster;
  r.stages = stages;
  return r;
}

}  // namespace baton::parallel::dag_fixtures
