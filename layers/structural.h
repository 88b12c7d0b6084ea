// Structural layers: Add (residual sums), Concat (channel joins), Flatten and Identity. No
// parameters and no arithmetic beyond Add's sums.
//
// Input gradients that are the output gradient unchanged (Add, Identity, Flatten) are returned as
// that very tensor or a reshape view of it, never a copy, as in PyTorch's autograd: the gradients a
// layer returns may share memory with the output gradient and with each other, so a caller that
// accumulates into a returned gradient in place must own it alone.
#pragma once

#include <cstdint>

#include "layers/options_layer.h"
#include "runtime/graph/layer.h"

namespace baton::layers {

// y = x_0 + x_1 + ... for two or more inputs of one shape and dtype. Saves nothing; every input's
// gradient is the output gradient.
class Add final : public Layer {
 public:
  std::string_view type() const override { return "Add"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  int num_inputs() const override { return -1; }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  std::vector<DType> infer_dtypes(std::span<const DType> inputs) const override;
  bool reads_channels_last() const override { return true; }
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;
};

struct ConcatOptions {
  int64_t dim = 1;  // only 1 (channels) is supported
};

// y = the inputs joined along dimension 1 (torch.cat(xs, dim=1)): two or more inputs of rank >= 2
// and one dtype, equal outside dimension 1. Saves the inputs' channel counts (a host record);
// backward copies each input's channels out of the output gradient.
class Concat final : public OptionsLayer<ConcatOptions> {
 public:
  // Throws a baton::Error unless dim == 1.
  explicit Concat(ConcatOptions options = {});

  std::string_view type() const override { return "Concat"; }
  nlohmann::json config() const override;  // {"dim": 1}
  int num_inputs() const override { return -1; }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  std::vector<DType> infer_dtypes(std::span<const DType> inputs) const override;
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
};

struct FlattenOptions {
  int64_t start_dim = 1;  // first dimension merged (negative: from the end)
  int64_t end_dim = -1;   // last dimension merged (negative: from the end)
};

// Dimensions start_dim .. end_dim merged into one, as torch.nn.Flatten (a rank-0 input counts as
// rank 1). The output is a reshape view of the input and the input gradient a view of the output
// gradient: no copies. Saves the input shape (a host record).
class Flatten final : public OptionsLayer<FlattenOptions> {
 public:
  explicit Flatten(FlattenOptions options = {});

  std::string_view type() const override { return "Flatten"; }
  nlohmann::json config() const override;  // {"start_dim": ..., "end_dim": ...}
  // Throws a baton::Error when a dimension is out of range for the input or start_dim comes after end_dim.
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
};

// y = x, the input tensor itself; the input gradient is the output gradient itself.
class Identity final : public Layer {
 public:
  std::string_view type() const override { return "Identity"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
};

}  // namespace baton::layers
