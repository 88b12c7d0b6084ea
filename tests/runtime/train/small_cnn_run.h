// A small training run shared by the CPU and CUDA training tests: a CNN (conv, batch norm, ReLU,
// pooling, linear, softmax cross-entropy) built with GraphBuilder on a fixed synthetic problem.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/loss.h"
#include "layers/graph_builder.h"
#include "runtime/core/philox.h"
#include "runtime/graph/executor.h"
#include "runtime/train/optimizer.h"
#include "tests/support/test_support.h"

namespace baton::testing {

constexpr int64_t kClasses = 4, kSize = 12, kBatch = 32;

// Class c: a bright 4x4 square in quadrant c of a 12x12 noisy 3-channel image, at a random offset
// inside the quadrant and with a random colour. Deterministic for (seed, index).
inline void make_batch(uint64_t seed, int64_t first, Tensor& images, Tensor& labels) {
  float* x = images.data<float>();
  int64_t* y = labels.data<int64_t>();
  for (int64_t n = 0; n < kBatch; ++n) {
    const uint64_t id = static_cast<uint64_t>(first + n) * 64;
    auto u = [&](uint64_t k) { return philox::to_uniform_float(philox::uint32_at(seed, id + k)); };
    const int64_t c = static_cast<int64_t>(u(0) * kClasses);
    y[n] = c;
    const int64_t oy = (c / 2) * 6 + static_cast<int64_t>(u(1) * 3), ox = (c % 2) * 6 + static_cast<int64_t>(u(2) * 3);
    for (int64_t ch = 0; ch < 3; ++ch) {
      const float colour = 0.5f + 0.5f * u(3 + static_cast<uint64_t>(ch));
      for (int64_t i = 0; i < kSize; ++i) {
        for (int64_t j = 0; j < kSize; ++j) {
          const bool inside = i >= oy && i < oy + 4 && j >= ox && j < ox + 4;
          const float noise = 0.3f * (philox::to_uniform_float(philox::uint32_at(
                                          seed + 1, id * 512 + static_cast<uint64_t>((ch * kSize + i) * kSize + j))) -
                                      0.5f);
          x[((n * 3 + ch) * kSize + i) * kSize + j] = (inside ? colour : 0.0f) + noise;
        }
      }
    }
  }
}

inline Graph small_cnn() {
  layers::GraphBuilder g;
  const ValueId x = g.input("x", Shape{kBatch, 3, kSize, kSize});
  const ValueId labels = g.input("labels", Shape{kBatch}, DType::i64);
  ValueId y = g.conv2d(x, {.out_channels = 8, .kernel = 3, .padding = 1, .bias = false}, "conv1");
  y = g.relu(g.batch_norm2d(y, {}, "bn1"), "relu1");
  y = g.max_pool2d(y, {.kernel = 2}, "pool1");
  y = g.conv2d(y, {.out_channels = 16, .kernel = 3, .padding = 1, .bias = false}, "conv2");
  y = g.relu(g.batch_norm2d(y, {}, "bn2"), "relu2");
  y = g.flatten(g.adaptive_avg_pool2d(y, "pool2"), "flatten");
  const ValueId logits = g.linear(y, kClasses, "fc");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

struct TrainingRun {
  std::vector<double> losses;
  double accuracy = 0;
};

inline TrainingRun train(Device device, int steps) {
  Context ctx(device);
  const Graph graph = small_cnn();
  ParamStore params(graph, graph.topological_order(), DType::f32, ctx);
  params.initialize(ctx, 2024);
  Executor executor(graph, graph.topological_order(), params);
  auto optimizer = make_optimizer({{"type", "sgd"}, {"momentum", 0.9}, {"weight_decay", 1e-4}}, params, ctx, "test");
  Tensor images = Tensor::empty_host(Shape{kBatch, 3, kSize, kSize}, DType::f32);
  Tensor labels = Tensor::empty_host(Shape{kBatch}, DType::i64);
  TrainingRun run;
  for (int step = 0; step < steps; ++step) {
    make_batch(7, step * kBatch, images, labels);
    params.zero_grads(ctx);
    Tape tape;
    std::vector<Tensor> inputs;
    for (ValueId v : executor.input_values()) {
      inputs.push_back((graph.value(v).name == "x" ? images : labels).to(device, ctx.stream()));
    }
    const std::vector<Tensor> outputs = executor.forward(ctx, inputs, tape, Mode::train, static_cast<uint64_t>(step));
    executor.backward(ctx, tape, std::vector<Tensor>(outputs.size()));
    optimizer->step(ctx, 0.05);
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (graph.value(executor.output_values()[o]).name == "loss") {
        run.losses.push_back(to_doubles(outputs[o], ctx.stream())[0]);
      }
    }
  }
  // Accuracy on 8 held-out batches in eval mode.
  int64_t correct = 0;
  for (int b = 0; b < 8; ++b) {
    make_batch(99, b * kBatch, images, labels);
    Tape tape;
    std::vector<Tensor> inputs;
    for (ValueId v : executor.input_values()) {
      inputs.push_back((graph.value(v).name == "x" ? images : labels).to(device, ctx.stream()));
    }
    const std::vector<Tensor> outputs = executor.forward(ctx, inputs, tape, Mode::eval);
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (graph.value(executor.output_values()[o]).name != "fc") continue;
      Tensor count = Tensor::empty(Shape{}, DType::i64, ctx);
      kernels::topk_correct(ctx, outputs[o], inputs[graph.value(executor.input_values()[0]).name == "labels" ? 0 : 1],
                            1, count);
      correct += count.to_vector<int64_t>(ctx.stream())[0];
    }
  }
  run.accuracy = static_cast<double>(correct) / (8 * kBatch);
  return run;
}

}  // namespace baton::testing
