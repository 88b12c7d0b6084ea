// Hand-built planner inputs for the simulator and trace tests: a chain of equal nodes, a plan that
// splits it into equal stages (with replicas and chunks), and a one-machine cluster.
#pragma once

#include <cstdint>

#include "parallel/plan/cluster.h"
#include "parallel/plan/plan.h"
#include "parallel/plan/profile.h"
#include "runtime/core/error.h"
#include "tests/parallel/plan/empty_profile.h"

namespace baton::parallel::fixtures {

struct ChainSpec {
  int nodes = 4;
  double fwd_ms = 1.0;  // per node, per sample (times are proportional to the batch)
  double bwd_ms = 2.0;
  int64_t param_bytes = 1000;  // per node
  int64_t act_bytes = 64;      // per node output, per sample
  int64_t saved_bytes = 32;    // per node, per sample, beyond its output
  double optimizer_ms_per_param_byte = 0.0;
};

// input -> n0 -> n1 -> ... -> n{k-1} (the last output is the graph's output).
inline Profile chain_profile(const ChainSpec& spec) {
  Profile p = empty_profile("chain", {1});
  p.optimizer_ms_per_param_byte = spec.optimizer_ms_per_param_byte;
  p.values.push_back({"input", -1, {0}, spec.act_bytes, false});
  for (int i = 0; i < spec.nodes; ++i) {
    ProfiledNode n;
    n.name = detail::concat("n", i);
    n.type = "linear";
    n.inputs = {i};
    n.outputs = {i + 1};
    n.fwd_ms = {spec.fwd_ms};
    n.bwd_ms = {spec.bwd_ms};
    n.param_bytes = spec.param_bytes;
    n.saved_bytes_per_sample = spec.saved_bytes;
    p.nodes.push_back(n);
    const bool last = i + 1 == spec.nodes;
    p.values.push_back(
        {detail::concat("n", i, ".out"), i, last ? std::vector<int>{} : std::vector<int>{i + 1}, spec.act_bytes, last});
  }
  return p;
}

// `stages` equal stages of the chain, each with `replicas` replicas; stage s's replica r runs on
// device r * P + s % P (P = stages / chunks pipeline positions).
inline Plan chain_plan(const Profile& profile, int stages, int batch, int micro_batches, int replicas = 1,
                       int chunks = 1) {
  Plan plan;
  plan.model = profile.model;
  plan.partitioner = "uniform";
  plan.batch = batch;
  plan.micro_batches = micro_batches;
  plan.chunks_per_device = chunks;
  const int positions = stages / chunks;
  const int n = profile.num_nodes();
  for (int s = 0; s < stages; ++s) {
    Stage stage;
    for (int i = s * n / stages; i < (s + 1) * n / stages; ++i) stage.nodes.push_back(i);
    stage.replicas = replicas;
    for (int r = 0; r < replicas; ++r) stage.devices.push_back(r * positions + s % positions);
    plan.stages.push_back(stage);
  }
  return plan;
}

// One machine of `devices` devices, every pair joined by the same link.
inline Cluster test_cluster(int devices, double bandwidth_gbs = 100.0, double latency_us = 5.0) {
  DeviceSpec spec;
  spec.name = "test";
  spec.description = "test device";
  spec.peak_tflops_fp32 = 10;
  spec.memory_bandwidth_gbs = 1000;
  spec.memory_gb = 80;
  const Link link{"nvlink", bandwidth_gbs, latency_us};
  return Cluster::topology("test", spec, 1, devices, link, link);
}

}  // namespace baton::parallel::fixtures
