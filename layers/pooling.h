// Pooling layers over kernels/pool.h: MaxPool2d, AvgPool2d and AdaptiveAvgPool2d (to 1x1 only).
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
// i64 for planes of 2^31 elements or more); backward gathers, deterministically.
class MaxPool2d final : public Layer {
 public:
  // Throws a baton::Error naming the field for an invalid geometry.
  explicit MaxPool2d(const MaxPool2dOptions& options);

  const kernels::Pool2dGeometry& geometry() const { return geometry_; }

  std::string_view type() const override { return "MaxPool2d"; }
  nlohmann::json config() const override;
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
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
  std::array<int64_t, 2> output_size{1, 1};  // only {1, 1} is supported (global average pooling)
};

// torch.nn.AdaptiveAvgPool2d with output_size 1: the mean of each plane, [N, C, 1, 1].
class AdaptiveAvgPool2d final : public Layer {
 public:
  // Throws a baton::Error for any output_size other than 1 x 1.
  explicit AdaptiveAvgPool2d(const AdaptiveAvgPool2dOptions& options = {});

  std::string_view type() const override { return "AdaptiveAvgPool2d"; }
  nlohmann::json config() const override;
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;
};

}  // namespace baton::layers
