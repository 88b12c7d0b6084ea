// Helpers for the data-parallel tests: small trainable models (an MLP and a convolution with batch
// norm, both with a loss and a prediction output), batches, and the single-device reference run
// over the same global batches split into micro-batches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "layers/graph_builder.h"
#include "parallel/dp/data_parallel_engine.h"
#include "parallel/pipeline/micro_batches.h"
#include "runtime/data/loader.h"
#include "runtime/graph/executor.h"
#include "runtime/train/graph_contract.h"
#include "runtime/train/optimizer.h"
#include "tests/support/test_support.h"

namespace baton::parallel::testing {

inline constexpr int64_t kDpClasses = 4;

// x [n, 6] -> fc1 8 -> relu -> fc2 8 -> tanh -> head 4 -> cross entropy; `unused` adds a linear
// layer whose output nothing reads but the graph's outputs (no gradient reaches it).
inline Graph dp_mlp(DType dtype, int64_t batch, bool unused = false) {
  layers::GraphBuilder g;
  const ValueId x = g.input("x", {batch, 6}, dtype);
  const ValueId labels = g.input("labels", {batch}, DType::i64);
  ValueId y = g.relu(g.linear(x, 8, "fc1"), "act1");
  y = g.tanh(g.linear(y, 8, "fc2"), "act2");
  const ValueId logits = g.linear(y, kDpClasses, "head");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  if (unused) g.output(g.linear(x, 3, "side"));
  return g.build();
}

// x [n, 2, 5, 5] -> conv 4 -> batch norm -> relu -> conv 4 -> batch norm -> relu -> pool -> head 4.
inline Graph dp_conv_bn(DType dtype, int64_t batch) {
  layers::GraphBuilder g;
  const ValueId x = g.input("x", {batch, 2, 5, 5}, dtype);
  const ValueId labels = g.input("labels", {batch}, DType::i64);
  ValueId y = g.relu(g.batch_norm2d(g.conv2d(x, {.out_channels = 4, .padding = 1}, "conv1"), {}, "bn1"), "relu1");
  y = g.relu(g.batch_norm2d(g.conv2d(y, {.out_channels = 4, .padding = 1}, "conv2"), {}, "bn2"), "relu2");
  y = g.flatten(g.adaptive_avg_pool2d(y, "pool"), "flat");
  const ValueId logits = g.linear(y, kDpClasses, "head");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

// Batch `seed` of `graph`'s input shape: random images, labels cycling over the classes.
inline data::Batch dp_batch(const Graph& graph, const Stream& stream, uint64_t seed) {
  const ValueInfo& x = graph.value(graph.value_id("x"));
  std::vector<int64_t> labels(static_cast<size_t>(x.shape[0]));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>((i * 7 + seed) % kDpClasses);
  return data::image_batch(baton::testing::random_tensor(x.shape, x.dtype, stream, seed),
                           Tensor::from_vector<int64_t>(labels, Shape{x.shape[0]}, stream));
}

inline const nlohmann::json& dp_optimizer() {
  static const nlohmann::json j = {{"type", "sgd"}, {"momentum", 0.9}, {"weight_decay", 1e-3}};
  return j;
}

// The single-device run: `steps` steps of batches dp_batch(seed = step), each in `parts`
// micro-batches (loss gradients n_m / n, micro_batch_seed seeds), SGD with dp_optimizer().
struct DpReference {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<ParamStore> params;
  std::vector<double> losses;
};

inline DpReference dp_reference(const Graph& graph, int parts, int steps, uint64_t init_seed, double lr) {
  DpReference r;
  r.ctx = std::make_unique<Context>(Device::cpu());
  Context& ctx = *r.ctx;
  const std::vector<NodeId> nodes = graph.topological_order();
  const DType dtype = graph.value(graph.value_id("x")).dtype;
  r.params = std::make_unique<ParamStore>(graph, nodes, dtype, ctx);
  r.params->initialize(ctx, init_seed);
  Executor ex(graph, nodes, *r.params);
  auto optimizer = make_optimizer(dp_optimizer(), *r.params, ctx, "reference");
  for (int step = 0; step < steps; ++step) {
    const data::Batch batch = dp_batch(graph, ctx.stream(), static_cast<uint64_t>(step));
    const std::vector<data::Batch> pieces = batch.split(parts);
    r.params->zero_grads(ctx);
    double loss = 0;
    for (int m = 0; m < parts; ++m) {
      const data::Batch& piece = pieces[static_cast<size_t>(m)];
      std::vector<Tensor> in;
      for (ValueId v : ex.input_values()) {
        in.push_back(graph.value(v).name == "x" ? piece.input("images") : piece.targets);
      }
      Tape tape;
      const std::vector<Tensor> out =
          ex.forward(ctx, in, tape, Mode::train, micro_batch_seed(static_cast<uint64_t>(step), m));
      const double scale = static_cast<double>(piece.rows()) / static_cast<double>(batch.rows());
      const size_t at = executor_output_index(ex, loss_output(graph));
      std::vector<Tensor> grads(out.size());
      grads[at] = Tensor::empty(out[at].shape(), out[at].dtype(), ctx);
      grads[at].fill(scale, ctx.stream());
      loss += scale * baton::testing::to_doubles(out[at], ctx.stream())[0];
      ex.backward(ctx, tape, grads, m == parts - 1);
    }
    optimizer->step(ctx, lr);
    r.losses.push_back(loss);
  }
  return r;
}

// `replicas` in-process replicas on cpu:0.. under `averaging`, SGD (dp_optimizer), initialised with seed 11.
inline std::unique_ptr<DataParallelEngine> averaging_engine(const Graph& graph, ModelAveraging averaging,
                                                            int replicas = 2) {
  TrainConfig config;
  config.optimizer = dp_optimizer();
  DataParallelOptions options;
  for (int r = 0; r < replicas; ++r) options.devices.push_back(Device::cpu(r));
  options.averaging = std::move(averaging);
  auto e = std::make_unique<DataParallelEngine>(graph, config, std::move(options));
  e->initialize(11);
  return e;
}

// One step of `e` on dp_batch(graph, seed) with learning rate `lr`: its loss.
inline double averaging_step(DataParallelEngine& e, const Graph& graph, uint64_t seed, double lr) {
  const Stream host = Stream::create(Device::cpu());
  return e.step(dp_batch(graph, host, seed), seed, lr).value();
}

}  // namespace baton::parallel::testing
