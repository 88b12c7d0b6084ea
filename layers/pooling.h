// Pooling layers over kernels/pool.h: MaxPool2d, AvgPool2d and AdaptiveAvgPool2d.
// Inputs are [N, C, H, W] (f32, f64, f16 or bf16); pairs are {height, width}; configs use PyTorch's
// names, and a single integer in JSON stands for both dimensions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "kernels/pool.h"
#include "runtime/graph/layer.h"

namespace baton::layers {

struct MaxPool2dOptions {
  std::array<int64_t, 2> kernel_size{1, 1};
  std::optional<std::array<int64_t, 2>> stride = std::nullopt;  // default: kernel_size
  std::array<int64_t, 2> padding{0, 0};                         // at most kernel_size / 2
  std::array<int64_t, 2> dilation{1, 1};
  bool ceil_mode = false;
};

// torch.nn.MaxPool2d (without return_indices). Forward saves the argmax of each window (i32, or
// i64 for planes of 2^31 elements or more); backward gathers, deterministically. Channels-last
// inputs give channels-last outputs.
class MaxPool2d final : public Layer {
 public:
  // Throws a baton::Error naming the field for an invalid geometry.
  explicit MaxPool2d(const MaxPool2dOptions& options);

  const kernels::Pool2dGeometry& geometry() const { return geometry_; }

  std::string_view type() const override { return "MaxPool2d"; }
  nlohmann::json config() const override;
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  bool reads_channels_last() const override { return true; }
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;

 private:
  kernels::Pool2dGeometry geometry_;
};

struct AvgPool2dOptions {
  std::array<int64_t, 2> kernel_size{1, 1};
  std::optional<std::array<int64_t, 2>> stride = std::nullopt;  // default: kernel_size
  std::array<int64_t, 2> padding{0, 0};                         // at most kernel_size / 2
  bool ceil_mode = false;
  bool count_include_pad = true;  // divide by the window size including padding
};

// torch.nn.AvgPool2d (without divisor_override).
class AvgPool2d final : public Layer {
 public:
  explicit AvgPool2d(const AvgPool2dOptions& options);

  const kernels::Pool2dGeometry& geometry() const { return geometry_; }
  bool count_include_pad() const { return count_include_pad_; }

  std::string_view type() const override { return "AvgPool2d"; }
  nlohmann::json config() const override;
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;

 private:
  kernels::Pool2dGeometry geometry_;
  bool count_include_pad_;
};

struct AdaptiveAvgPool2dOptions {
  std::array<int64_t, 2> output_size{1, 1};  // {OH, OW}, each >= 1
};

// torch.nn.AdaptiveAvgPool2d: [N, C, H, W] -> [N, C, OH, OW], output (oh, ow) the mean of PyTorch's
// adaptive window (kernels::adaptive_avg_pool2d_forward). Output size 1 is global average pooling
// (its own fast kernels, which read channels-last inputs too); torchvision's VGG and AlexNet pool to
// 7 x 7 and 6 x 6.
class AdaptiveAvgPool2d final : public Layer {
 public:
  // Throws a baton::Error naming output_size when a size is below 1.
  explicit AdaptiveAvgPool2d(const AdaptiveAvgPool2dOptions& options = {});

  const std::array<int64_t, 2>& output_size() const { return output_size_; }

  std::string_view type() const override { return "AdaptiveAvgPool2d"; }
  nlohmann::json config() const override;  // {"output_size": [OH, OW]}
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  bool reads_channels_last() const override { return output_size_[0] == 1 && output_size_[1] == 1; }
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  // Forward: an add per window tap and a division per output; backward: one term per tap.
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;

 private:
  std::array<int64_t, 2> output_size_;
};

}  // namespace baton::layers
