// Dropout: in train mode zeroes each element with probability p and scales the others by
// 1 / (1 - p) (PyTorch's inverted dropout); in eval mode the identity.
//
// The mask is never stored. It is a function of ForwardArgs::seed and the element index
// (kernels/dropout.h), so forward saves only the seed, as a one-element host record
// (layers/layer_support.h), and backward regenerates the same mask from it: no device memory is
// kept for backward, and the mask is the same on CPU and CUDA. With p = 0 or in eval mode nothing is
// saved and both passes are the identity: the output is the input tensor itself and the input
// gradient the output gradient itself (no copy, as PyTorch's eval-mode dropout).
#pragma once

#include "layers/options_layer.h"
#include "runtime/graph/layer.h"

namespace baton::layers {

struct DropoutOptions {
  double p = 0.5;  // drop probability, in [0, 1)
};

class Dropout final : public OptionsLayer<DropoutOptions> {
 public:
  // Throws a baton::Error unless 0 <= p < 1.
  explicit Dropout(DropoutOptions options = {});

  std::string_view type() const override { return "Dropout"; }
  nlohmann::json config() const override;  // {"p": p}
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  // For train mode (a multiply per element each way; the Philox bits are integer work, not counted).
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;
};

}  // namespace baton::layers
