// The whole model on one device: a step is zero the gradients, forward, backward, optimiser step.
#include "runtime/train/single_device_engine.h"

#include <vector>

#include "kernels/deferred_checks.h"
#include "runtime/core/error.h"
#include "runtime/train/evaluation.h"
#include "runtime/train/graph_contract.h"

namespace baton {
namespace {

// The parameters' dtype: the policy's master dtype, once the model is checked to be built for it.
DType master_dtype(const Graph& graph, const PrecisionPolicy& precision) {
  check_precision(graph, precision, "SingleDeviceEngine");
  return precision.master();
}

}  // namespace

SingleDeviceEngine::SingleDeviceEngine(const Graph& graph, const TrainConfig& config, Device device,
                                       const PrecisionPolicy& precision)
    : graph_(graph),
      ctx_(device),
      params_(graph, graph.topological_order(), master_dtype(graph, precision), ctx_),
      executor_(graph, graph.topological_order(), params_),
      loss_at_(executor_output_index(executor_, loss_output(graph))) {
  ctx_.set_allow_tf32(config.tf32);
  ctx_.set_channels_last(config.channels_last);
  optimizer_ = make_optimizer(config.optimizer, params_, ctx_, "train config: optimizer");
}

PendingLoss SingleDeviceEngine::step(const data::Batch& batch, uint64_t seed, double lr) {
  params_.zero_grads(ctx_);
  Tape tape;
  const std::vector<Tensor> out =
      executor_.forward(ctx_, batch_inputs(graph_, executor_, batch), tape, Mode::train, seed);
  executor_.backward(ctx_, tape, std::vector<Tensor>(out.size()));
  optimizer_->step(ctx_, lr);
  return losses_.read(ctx_, {out[loss_at_]}, {1.0});
}

EvalResult SingleDeviceEngine::evaluate(const data::Dataset& test, int64_t batch_size, int workers) {
  return evaluate_model(graph_, executor_, ctx_, test, batch_size, workers);
}

std::string SingleDeviceEngine::save_checkpoint(CheckpointManager& manager, const CheckpointState& state) {
  kernels::raise_deferred_errors(ctx_);
  return manager.save(params_, *optimizer_, state, ctx_);
}

CheckpointState SingleDeviceEngine::load_checkpoint(const std::string& dir) {
  return CheckpointManager::load(dir, params_, optimizer_.get(), ctx_);
}

void SingleDeviceEngine::load_weights(const std::string& safetensors_path) {
  baton::load_weights(safetensors_path, params_, ctx_);
}

}  // namespace baton
