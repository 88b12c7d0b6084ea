// A training run for the checkpoint tests: the small CNN (conv, batch norm, linear: parameters,
// running statistics and an I64 counter) with an optimiser, random contents for every tensor,
// a bitwise snapshot of all of them, and training steps on the fixed synthetic problem.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/train/checkpoint.h"
#include "runtime/train/tensor_matching.h"
#include "tests/runtime/train/small_cnn_run.h"

namespace baton::testing {

struct CheckpointRun {
  explicit CheckpointRun(const nlohmann::json& optimizer_config, uint64_t seed = 1, Device device = Device::cpu(),
                         DType dtype = DType::f32)
      : ctx(device), params(graph, graph.topological_order(), dtype, ctx) {
    params.initialize(ctx, seed);
    optimizer = make_optimizer(optimizer_config, params, ctx, "test");
  }

  // Random values in every parameter, buffer and optimiser state tensor (padding stays zero), and
  // `seed` as the optimiser's step count.
  void randomize(uint64_t seed) {
    uint64_t s = seed * 1000;
    // Variances, counters and AdamW's exp_avg_sq stay >= 0, as a load checks.
    for (auto& [name, t] : model_tensors(params)) {
      const double low = never_negative(name) ? 0 : -50;
      t.copy_from(random_tensor(t.shape(), t.dtype(), ctx.stream(), ++s, low, 50), ctx.stream());
    }
    for (auto& [name, t] : optimizer_tensors(params, *optimizer)) {
      const double low = never_negative(name) ? 0 : -1;
      t.copy_from(random_tensor(t.shape(), t.dtype(), ctx.stream(), ++s, low, 1), ctx.stream());
    }
    optimizer->set_steps(static_cast<int64_t>(seed));
  }

  // The bytes of every tensor a checkpoint covers (flat buffers whole, so padding counts too).
  std::map<std::string, std::vector<unsigned char>> snapshot() const {
    std::map<std::string, std::vector<unsigned char>> out{
        {"params_flat", bytes_of(params.params_flat(), ctx.stream())}};
    for (const BufferEntry& b : params.buffers()) out[b.name] = bytes_of(params.buffer(b.name), ctx.stream());
    for (const auto& [name, flat] : optimizer->state()) out["state:" + name] = bytes_of(flat, ctx.stream());
    return out;
  }

  // `count` SGD/AdamW steps from absolute step `first` (batch contents depend on the step only);
  // returns the losses.
  std::vector<double> train(int first, int count) {
    Executor executor(graph, graph.topological_order(), params);
    Tensor images = Tensor::empty_host(Shape{kBatch, 3, kSize, kSize}, DType::f32);
    Tensor labels = Tensor::empty_host(Shape{kBatch}, DType::i64);
    std::vector<double> losses;
    for (int step = first; step < first + count; ++step) {
      make_batch(7, step * kBatch, images, labels);
      params.zero_grads(ctx);
      Tape tape;
      std::vector<Tensor> inputs;
      for (ValueId v : executor.input_values()) {
        inputs.push_back((graph.value(v).name == "x" ? images : labels).to(ctx.device(), ctx.stream()));
      }
      const std::vector<Tensor> outputs = executor.forward(ctx, inputs, tape, Mode::train, static_cast<uint64_t>(step));
      executor.backward(ctx, tape, std::vector<Tensor>(outputs.size()));
      optimizer->step(ctx, 0.05);
      for (size_t o = 0; o < outputs.size(); ++o) {
        if (graph.value(executor.output_values()[o]).name == "loss")
          losses.push_back(to_doubles(outputs[o], ctx.stream())[0]);
      }
    }
    return losses;
  }

  CheckpointState state(int64_t step) const {
    CheckpointState s;
    s.step = step;
    s.epoch = step / 10;
    s.seed = (uint64_t{1} << 63) + 5;  // needs all 64 bits
    // Unsigned, so that the step beyond any real run (10^18) wraps instead of overflowing.
    s.loader_position = {{"epoch", s.epoch}, {"index", static_cast<int64_t>(static_cast<uint64_t>(step) * kBatch)}};
    s.rng = {{"philox_offset", 123456789012345LL}};
    s.model_spec = graph.to_json();
    s.train_config = {{"lr", 0.05}, {"optimizer", optimizer->config()}};
    return s;
  }

  // Saves this run as step `step` with `manager`; returns the checkpoint's path.
  std::string save(const CheckpointManager& manager, int64_t step) {
    return manager.save(params, *optimizer, state(step), ctx);
  }

  Context ctx;
  Graph graph = small_cnn();
  ParamStore params;
  std::unique_ptr<Optimizer> optimizer;
};

inline const nlohmann::json kSgd = {{"type", "sgd"}, {"momentum", 0.9}, {"weight_decay", 1e-4}};
inline const nlohmann::json kAdamW = {{"type", "adamw"}, {"weight_decay", 0.01}};

}  // namespace baton::testing
