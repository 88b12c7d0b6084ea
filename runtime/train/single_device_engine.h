// SingleDeviceEngine: the whole model on one device — one ParamStore, one Executor over the
// graph's topological order and one optimiser. The Trainer's default TrainEngine.
#pragma once

#include <memory>
#include <string>

#include "runtime/graph/executor.h"
#include "runtime/graph/param_store.h"
#include "runtime/graph/precision.h"
#include "runtime/train/optimizer.h"
#include "runtime/train/train_config.h"
#include "runtime/train/train_engine.h"

namespace baton {

class SingleDeviceEngine final : public TrainEngine {
 public:
  // `graph` (trainable, see graph_contract.h, built in the policy's activation dtype) must outlive the
  // engine; the parameters are in the policy's master dtype; the optimiser is config.optimizer and
  // float32 math may use TF32 when config.tf32. The default policy (uniform f32) is the one of the
  // Trainer's batches (the loader's f32 images); under another the caller gives batches of its dtype.
  SingleDeviceEngine(const Graph& graph, const TrainConfig& config, Device device,
                     const PrecisionPolicy& precision = PrecisionPolicy());

  Context& input_context() override { return ctx_; }
  void initialize(uint64_t seed) override { params_.initialize(ctx_, seed); }
  PendingLoss step(const data::Batch& batch, uint64_t seed, double lr) override;
  EvalResult evaluate(const data::Dataset& test, int64_t batch_size, int workers) override;
  std::string save_checkpoint(CheckpointManager& manager, const CheckpointState& state) override;
  CheckpointState load_checkpoint(const std::string& dir) override;
  void load_weights(const std::string& safetensors_path) override;

  ParamStore& params() { return params_; }

 private:
  const Graph& graph_;
  Context ctx_;
  ParamStore params_;
  Executor executor_;
  size_t loss_at_;  // the loss among the executor's outputs
  std::unique_ptr<Optimizer> optimizer_;
  LossReadback losses_;
};

}  // namespace baton
