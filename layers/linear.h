// Fully connected layer: Linear (PyTorch's nn.Linear) over kernels/gemm.h.
#pragma once

#include <cstdint>

#include "layers/fan_in_init.h"
#include "layers/options_layer.h"
#include "runtime/graph/layer.h"

namespace baton::layers {

struct LinearOptions {
  int64_t in_features = 0;   // >= 1
  int64_t out_features = 0;  // >= 1
  bool bias = true;
  WeightInit init{};  // overrides of the default initialisers (config fields "weight_init", "bias_init")

  bool operator==(const LinearOptions&) const = default;
};

// y = x · weightᵀ + bias: x [N, in_features] -> y [N, out_features]. Parameters `weight`
// [out_features, in_features] (PyTorch's layout) and, with bias, `bias` [out_features], both
// initialised U(-1/sqrt(in_features), 1/sqrt(in_features)) (PyTorch's defaults) unless options.init
// overrides them; the bias has no weight decay. Saves its input (a view, no copy) for backward.
class Linear final : public OptionsLayer<LinearOptions> {
 public:
  // Throws baton::Error naming the first invalid option.
  explicit Linear(const LinearOptions& options);

  std::string_view type() const override { return "Linear"; }
  // {"in_features", "out_features", "bias"} and, when set, "weight_init" / "bias_init".
  nlohmann::json config() const override;
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  std::vector<TensorSpec> param_specs(std::span<const Shape> inputs) const override;
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  // MACs N·in·out forward; backward: input and weight gradients (as many MACs each) and the bias sum.
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;
};

}  // namespace baton::layers
