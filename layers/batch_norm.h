// Batch normalisation layers: BatchNorm2d over kernels/batch_norm.h.
#pragma once

#include <cstdint>
#include <memory>

#include "layers/options_layer.h"
#include "runtime/graph/layer.h"

namespace baton::layers {

// torch.nn.BatchNorm2d's arguments, plus baton's freeze_statistics.
struct BatchNorm2dOptions {
  int64_t num_features = 0;         // C: the input is [N, C, H, W]
  double eps = 1e-5;                // > 0, added to the variance
  double momentum = 0.1;            // in [0, 1]: running = (1 − momentum)·running + momentum·batch statistic
  bool affine = true;               // learnable weight (γ, init 1) and bias (β, init 0)
  bool track_running_stats = true;  // keep running_mean, running_var and num_batches_tracked
  // "Frozen BN" (a baton option, default false; needs track_running_stats): in train mode too, the
  // layer normalises with the running statistics and never updates them, as in eval mode, while
  // γ and β still train. Used to fine-tune with small micro-batches, whose batch statistics are
  // too noisy (and would differ between pipeline micro-batches).
  bool freeze_statistics = false;
};

// y = (x − μ)/sqrt(σ² + eps)·γ + β per channel, as torch.nn.BatchNorm2d:
// - train mode (unless freeze_statistics): μ and σ² (biased) are the batch's statistics over N, H,
//   W; the running statistics are then updated (unbiased variance) and num_batches_tracked counted,
//   when ForwardArgs::update_buffers is true. With ForwardArgs::deferred (deferred batch norm in a
//   pipeline) the batch's statistics are gathered there instead, merged over the step's
//   micro-batches, and committed once: the running statistics one forward over the whole
//   mini-batch would give, num_batches_tracked + 1.
// - eval mode, or freeze_statistics: μ and σ² are running_mean and running_var; nothing is updated.
// - track_running_stats = false: always the batch's statistics (in eval mode too); no buffers.
// Parameters weight, bias (no weight decay); buffers running_mean, running_var, num_batches_tracked
// (i64 scalar), named as torchvision names them. Tensors are f32 or f64.
class BatchNorm2d final : public OptionsLayer<BatchNorm2dOptions> {
 public:
  // Throws a baton::Error naming the option when num_features < 1, eps <= 0, momentum outside
  // [0, 1], or freeze_statistics without track_running_stats.
  explicit BatchNorm2d(const BatchNorm2dOptions& options);

  std::string_view type() const override { return "BatchNorm2d"; }
  nlohmann::json config() const override;
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  std::vector<TensorSpec> param_specs(std::span<const Shape> inputs) const override;
  std::vector<TensorSpec> buffer_specs(std::span<const Shape> inputs) const override;
  bool reads_channels_last() const override { return true; }
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  // For the statistics the layer uses in train mode (batch statistics unless freeze_statistics).
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;
  // Gathers (count, mean, biased variance) per channel over micro-batches; null without
  // track_running_stats or with freeze_statistics (nothing to update).
  std::unique_ptr<DeferredUpdate> make_deferred_update() const override;
};

}  // namespace baton::layers
