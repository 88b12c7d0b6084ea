// Helpers for the hybrid tests: plans replicating every stage of an even split over G groups, their
// devices (group g's positions on cpu:g P ..), a group's schedule with its all_reduce instructions.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
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
// `plan`'s stages replicated over `groups` groups, group g's positions on cpu:g P ...; each group
// runs plan.micro_batches micro-batches (the step: groups x as many).
inline Plan replicated(Plan plan, int groups) {
  const int positions = plan.num_stages() / plan.chunks_per_device;
  plan.micro_batches *= groups;
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

// `graph` in even stages with these replicas each (unequal replication), their devices consecutive.
inline Plan replicated_plan(const Graph& graph, const std::vector<int>& replicas, int micro_batches) {
  Plan plan = even_plan(graph, static_cast<int>(replicas.size()), micro_batches);
  for (size_t s = 0; s < replicas.size(); ++s) plan.stages[s].replicas = replicas[s];
  assign_devices(plan);
  return plan;
}

// Float64, SGD with momentum and weight decay, `strategy` across the groups.
inline HybridOptions f64_hybrid_options(GradSyncStrategy strategy) {
  HybridOptions options;
  options.pipeline = f64_options();
  options.pipeline.optimizer = kSgd;
  options.grad_sync = strategy;
  return options;
}

// x [16, 2, 4, 4] -> conv 3 -> bn -> relu -> conv 3 -> bn -> relu -> avg pool -> flatten -> linear 4
// -> cross entropy: 10 nodes.
inline Graph bn_cnn() {
  layers::GraphBuilder g(test_layers());
  ValueId x = g.input("x", {kBatch, 2, 4, 4}, DType::f64);
  const ValueId labels = g.input("labels", {kBatch}, DType::i64);
  x = g.conv2d(x, {.out_channels = 3, .kernel = 3, .padding = 1, .bias = false}, "conv1");
  x = g.relu(g.batch_norm2d(x, {.momentum = 0.1}, "bn1"), "relu1");
  x = g.conv2d(x, {.out_channels = 3, .kernel = 3, .padding = 1}, "conv2");
  x = g.relu(g.batch_norm2d(x, {.momentum = 0.3}, "bn2"), "relu2");
  x = g.flatten(g.adaptive_avg_pool2d(x, "pool"), "flatten");
  g.output(g.softmax_cross_entropy(g.linear(x, kClasses, "head"), labels, "loss"));
  return g.build();
}

// A batch for `graph`'s first input shape, labels 0..3.
inline std::vector<Tensor> batch_for(const Graph& graph, const Stream& stream, uint64_t seed) {
  std::vector<Tensor> inputs = batch(DType::f64, stream, seed);
  inputs[0] = baton::testing::random_tensor(graph.value(graph.inputs()[0]).shape, DType::f64, stream, seed);
  return inputs;
}

// Every parameter's value and gradient (or buffer, with `buffers`) of a pipeline's local stages, by
// name.
inline std::map<std::string, std::vector<double>> tensors_of(PipelineExecutor& pipe, bool gradients,
                                                             bool buffers = false) {
  std::map<std::string, std::vector<double>> out;
  for (int s = 0; s < pipe.num_stages(); ++s) {
    if (!pipe.local(s)) continue;  // another process's stage
    const ParamStore& store = pipe.stage_params(s);
    const Stream& stream = pipe.stage(s).context().stream();
    if (buffers) {
      for (const BufferEntry& b : store.buffers())
        out[b.name] = baton::testing::to_doubles(store.buffer(b.name), stream);
      continue;
    }
    for (const ParamEntry& e : store.params()) {
      out[e.name] = baton::testing::to_doubles(gradients ? store.grad(e.name) : store.param(e.name), stream);
    }
  }
  return out;
}

inline ::testing::AssertionResult same_tensors(const std::map<std::string, std::vector<double>>& actual,
                                               const std::map<std::string, std::vector<double>>& expected,
                                               double tolerance = 1e-12) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << actual.size() << " tensors where the reference has " << expected.size();
  }
  for (const auto& [name, values] : expected) {
    const auto it = actual.find(name);
    if (it == actual.end()) return ::testing::AssertionFailure() << name << " is missing";
    const auto close = baton::testing::all_close(it->second, values, tolerance, tolerance);
    if (!close) return ::testing::AssertionFailure() << name << ": " << close.message();
  }
  return ::testing::AssertionSuccess();
}

// `steps` steps of `step(inputs, options)` (a hybrid's) against `single`'s over the same batches
// (batch_for seeds 5, 6, ..., step seeds 99, 100, ...): every loss equal to `tolerance`.
template <typename Step>
void expect_same_losses(const Graph& graph, PipelineExecutor& single, int steps, Step&& step, double tolerance) {
  Context host(Device::cpu());
  for (int i = 0; i < steps; ++i) {
    const std::vector<Tensor> inputs = batch_for(graph, host.stream(), 5 + static_cast<uint64_t>(i));
    const StepOptions options{.seed = 99 + static_cast<uint64_t>(i), .lr = kLr};
    const double loss = step(inputs, options);
    const double expected = single.step(inputs, options);
    EXPECT_NEAR(loss, expected, tolerance * std::max(1.0, std::abs(expected))) << "step " << i;
  }
}

// The first graph output of every micro-batch of two evaluations, equal to 1e-12.
inline void expect_same_outputs(const PipelineOutputs& mine, const PipelineOutputs& theirs, const Stream& stream) {
  ASSERT_EQ(mine.micro_batch_sizes, theirs.micro_batch_sizes);
  for (size_t m = 0; m < mine.micro_batch_sizes.size(); ++m) {
    const auto a = baton::testing::to_doubles(mine.outputs[0][m], stream);
    const auto b = baton::testing::to_doubles(theirs.outputs[0][m], stream);
    EXPECT_TRUE(baton::testing::all_close(a, b, 1e-12, 1e-12)) << "micro-batch " << m;
  }
}

inline std::vector<std::vector<Device>> plan_devices(const Plan& plan) {
  std::vector<std::vector<Device>> devices(static_cast<size_t>(plan.stages.front().replicas));
  for (const Stage& stage : plan.stages) {
    for (size_t g = 0; g < devices.size(); ++g) devices[g].push_back(Device::cpu(stage.devices[g]));
  }
  return devices;
}

// The step's schedule of a hybrid plan: `kind` with the plan's replicas and an all_reduce per stage.
inline Schedule hybrid_schedule(const Graph& graph, const Plan& plan, ScheduleKind kind) {
  const int chunks = plan.chunks_per_device;
  std::vector<int> replicas;
  for (const Stage& s : plan.stages) replicas.push_back(s.replicas);
  return make_schedule(kind, plan.num_stages() / chunks, chunks, plan.micro_batches, consumers_of(graph, plan),
                       /*all_reduce=*/true, replicas);
}

// A 1F1B hybrid of `plan` on its CPU devices (plan_devices) with `options`, initialised from `seed`.
inline std::unique_ptr<HybridExecutor> one_f_one_b_hybrid(const Graph& graph, const Plan& plan,
                                                          const HybridOptions& options, uint64_t seed) {
  auto hybrid = std::make_unique<HybridExecutor>(graph, plan, hybrid_schedule(graph, plan, ScheduleKind::one_f_one_b),
                                                 plan_devices(plan), options);
  hybrid->initialize(seed);
  return hybrid;
}

}  // namespace baton::parallel::testing
