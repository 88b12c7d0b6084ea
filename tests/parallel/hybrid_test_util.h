// Helpers for the hybrid tests: plans replicating every stage of an even split over G groups, their
// devices (group g's positions on cpu:g P ..), a group's schedule with its all_reduce instructions.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "parallel/pipeline/hybrid_executor.h"
#include "tests/parallel/pipeline_test_util.h"

namespace baton::parallel::testing {

inline constexpr double kLr = 0.05;
inline const nlohmann::json kSgd = {{"type", "sgd"}, {"momentum", 0.9}, {"weight_decay", 1e-3}};

struct Layout {
  int groups;
  int stages;
};

// `graph` split into `stages` even stages (`chunks` per position), each replicated `groups` times;
// group g's positions on cpu:g P .. cpu:g P + P - 1.
// `plan`'s stages replicated over `groups` groups, group g's positions on cpu:g P ...
inline Plan replicated(Plan plan, int groups) {
  const int positions = plan.num_stages() / plan.chunks_per_device;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    plan.stages[s].replicas = groups;
    plan.stages[s].devices.clear();
    for (int g = 0; g < groups; ++g) plan.stages[s].devices.push_back(g * positions + static_cast<int>(s) % positions);
  }
  return plan;
}

inline Plan hybrid_plan(const Graph& graph, Layout layout, int micro_batches, int chunks) {
  return replicated(even_plan(graph, layout.stages, micro_batches, chunks), layout.groups);
}

// Float64, SGD with momentum and weight decay, `strategy` across the groups.
inline HybridOptions f64_hybrid_options(GradSyncStrategy strategy) {
  HybridOptions options;
  options.pipeline = f64_options();
  options.pipeline.optimizer = kSgd;
  options.grad_sync = strategy;
  return options;
}

inline std::vector<std::vector<Device>> plan_devices(const Plan& plan) {
  std::vector<std::vector<Device>> devices(static_cast<size_t>(plan.stages.front().replicas));
  for (const Stage& stage : plan.stages) {
    for (size_t g = 0; g < devices.size(); ++g) devices[g].push_back(Device::cpu(stage.devices[g]));
  }
  return devices;
}

inline Schedule group_schedule(const Graph& graph, const Plan& plan, ScheduleKind kind) {
  const int chunks = plan.chunks_per_device;
  return make_schedule(kind, plan.num_stages() / chunks, chunks, plan.micro_batches, consumers_of(graph, plan),
                       /*all_reduce=*/true);
}

}  // namespace baton::parallel::testing
