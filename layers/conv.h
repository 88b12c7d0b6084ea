// Convolution layers: Conv2d (PyTorch's nn.Conv2d on NCHW tensors) over kernels/conv.h.
#pragma once

#include <array>
#include <cstdint>

#include "kernels/conv.h"
#include "layers/fan_in_init.h"
#include "layers/options_layer.h"
#include "runtime/graph/layer.h"

namespace baton::layers {

struct Conv2dOptions {
  int64_t in_channels = 0;                   // C, >= 1
  int64_t out_channels = 0;                  // K, >= 1
  std::array<int64_t, 2> kernel_size{1, 1};  // [R, S], >= 1
  std::array<int64_t, 2> stride{1, 1};       // >= 1
  std::array<int64_t, 2> padding{0, 0};      // >= 0, zeros on both sides
  std::array<int64_t, 2> dilation{1, 1};     // >= 1
  int64_t groups = 1;                        // divides in_channels and out_channels
  bool bias = true;
  WeightInit init{};  // overrides of the default initialisers (config fields "weight_init", "bias_init")

  bool operator==(const Conv2dOptions&) const = default;
};

// y = conv2d(x, weight) + bias: x [N, C, H, W] -> y [N, K, P, Q]. Parameters `weight` [K, C / groups,
// R, S] and, with bias, `bias` [K], both initialised U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in =
// C / groups · R · S (PyTorch's defaults) unless options.init overrides them; the bias has no weight
// decay. Saves its input (a view, no copy) for backward.
class Conv2d final : public OptionsLayer<Conv2dOptions> {
 public:
  // Throws baton::Error naming the first invalid option.
  explicit Conv2d(const Conv2dOptions& options);

  kernels::Conv2dParams params() const;

  std::string_view type() const override { return "Conv2d"; }
  // {"in_channels", "out_channels", "kernel_size": [R, S], "stride": [.,.], "padding": [.,.],
  //  "dilation": [.,.], "groups", "bias"} and, when set, "weight_init" / "bias_init"
  //  ({"normal": [mean, std]}, ...; json_config.h). JSON configs may give a pair as one integer.
  nlohmann::json config() const override;
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  std::vector<TensorSpec> param_specs(std::span<const Shape> inputs) const override;
  bool reads_channels_last() const override { return true; }
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  // MACs of forward; backward counts the data gradient, the filter gradient (each as many MACs as
  // forward) and the bias sum. saved_bytes: the input kept for backward. workspace_bytes: the CPU
  // path's column buffer (cuDNN picks its workspace at run time, within ctx.workspace_limit()).
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;
};

}  // namespace baton::layers
