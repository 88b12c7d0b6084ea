// Pointwise activation layers: ReLU (more join this family).
#pragma once

#include "runtime/graph/layer.h"

namespace baton::layers {

// y = max(x, 0). Saves its output for backward (dx = dy where y > 0).
class ReLU final : public Layer {
 public:
  std::string_view type() const override { return "ReLU"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;
};

}  // namespace baton::layers
