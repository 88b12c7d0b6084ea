// Pooling layers over kernels/pool.h.
//
// Backward needs the input's size and memory format but not its values (max pooling keeps the argmax
// indices), so forward saves a zero-byte "shape token" [0, C, H, W] in the input's format instead of
// the input: the input's memory is not kept alive for backward.
#include "layers/pooling.h"

#include <cstdint>
#include <limits>
#include <string_view>

#include "kernels/layout.h"
#include "kernels/pool_math.h"
#include "layers/builtin_layers.h"
#include "runtime/graph/json_config.h"

namespace baton::layers {
namespace {

using Size2 = std::array<int64_t, 2>;

Tensor shape_token(const Tensor& x, const Context& ctx) {
  return Tensor::empty(x.shape().with_dim0(0), x.dtype(), ctx.stream(), x.format());
}

// The input gradient: uninitialised, of the input's shape (recorded by shape_token, with the batch size
// of the output gradient) and format.
Tensor input_grad(const Tensor& token, const Tensor& dy, const Context& ctx) {
  return Tensor::empty(Shape{dy.size(0), token.size(1), token.size(2), token.size(3)}, dy.dtype(), ctx.stream(),
                       token.format());
}

// Planes of more than 2^31 - 1 elements need i64 argmax indices.
DType index_dtype(const Shape& input) {
  return input[2] * input[3] <= std::numeric_limits<int32_t>::max() ? DType::i32 : DType::i64;
}

// An optional pair field: absent or null gives nullopt (PyTorch's stride=None).
std::optional<Size2> optional_pair(const nlohmann::json& config, const JsonConfig& c, std::string_view field) {
  if (!c.has(field) || config.at(std::string(field)).is_null()) return std::nullopt;
  return c.get_pair(field);
}

// The fields MaxPool2d and AvgPool2d share, read from JSON into their options.
template <typename Options>
void read_window(const nlohmann::json& config, const JsonConfig& c, Options& o) {
  o.kernel_size = c.get_pair("kernel_size");
  o.stride = optional_pair(config, c, "stride");
  o.padding = c.get_pair("padding", o.padding);
  o.ceil_mode = c.get_bool("ceil_mode", o.ceil_mode);
}

// The common part of the window-pooling layers' cost: every output element reads its window.
LayerCost window_cost(const LayerCost& base, const Shape& input, const Shape& output, const Size2& kernel) {
  LayerCost c = base;
  const auto taps = static_cast<double>(kernel[0] * kernel[1]);
  c.forward_flops = static_cast<double>(output.numel()) * taps;
  // The gather visits every kernel tap of every input element.
  c.backward_flops = static_cast<double>(input.numel()) * taps;
  return c;
}

}  // namespace

// ---- MaxPool2d

MaxPool2d::MaxPool2d(const MaxPool2dOptions& o)
    : geometry_{o.kernel_size, o.stride.value_or(o.kernel_size), o.padding, o.dilation, o.ceil_mode} {
  kernels::check_pool_geometry("MaxPool2d", geometry_);
}

nlohmann::json MaxPool2d::config() const {
  return {{"kernel_size", pair_json(geometry_.kernel)},
          {"stride", pair_json(geometry_.stride)},
          {"padding", pair_json(geometry_.padding)},
          {"dilation", pair_json(geometry_.dilation)},
          {"ceil_mode", geometry_.ceil_mode}};
}

std::vector<Shape> MaxPool2d::infer_shapes(std::span<const Shape> inputs) const {
  return {kernels::pool2d_output_shape("MaxPool2d", inputs[0], geometry_)};
}

ForwardResult MaxPool2d::forward(const ForwardArgs& args) const {
  const Tensor& x = args.inputs[0];
  const Shape out = infer_shapes(std::span<const Shape>(&x.shape(), 1))[0];
  Tensor y = Tensor::empty(out, x.dtype(), args.ctx.stream(), x.format());
  Tensor indices = Tensor::empty(out, index_dtype(x.shape()), args.ctx.stream(), x.format());
  kernels::max_pool2d_forward(args.ctx, x, geometry_, y, indices);
  return {{y}, {indices, shape_token(x, args.ctx)}};
}

std::vector<Tensor> MaxPool2d::backward(const BackwardArgs& args) const {
  if (!args.needs_input_grad[0]) return {Tensor()};
  const Tensor& indices = args.saved[0];
  const Tensor dy = kernels::to_memory_format(args.ctx, args.output_grads[0], indices.format());
  Tensor dx = input_grad(args.saved[1], dy, args.ctx);
  kernels::max_pool2d_backward(args.ctx, dy, indices, geometry_, dx);
  return {dx};
}

LayerCost MaxPool2d::cost(std::span<const Shape> inputs, DType dtype) const {
  const Shape out = infer_shapes(inputs)[0];
  LayerCost c = window_cost(Layer::cost(inputs, dtype), inputs[0], out, geometry_.kernel);
  c.saved_bytes = out.bytes(static_cast<int64_t>(dtype_size(index_dtype(inputs[0]))));
  return c;
}

// ---- AvgPool2d

AvgPool2d::AvgPool2d(const AvgPool2dOptions& o)
    : geometry_{o.kernel_size, o.stride.value_or(o.kernel_size), o.padding, Size2{1, 1}, o.ceil_mode},
      count_include_pad_(o.count_include_pad) {
  kernels::check_pool_geometry("AvgPool2d", geometry_);
}

nlohmann::json AvgPool2d::config() const {
  return {{"kernel_size", pair_json(geometry_.kernel)},
          {"stride", pair_json(geometry_.stride)},
          {"padding", pair_json(geometry_.padding)},
          {"ceil_mode", geometry_.ceil_mode},
          {"count_include_pad", count_include_pad_}};
}

std::vector<Shape> AvgPool2d::infer_shapes(std::span<const Shape> inputs) const {
  return {kernels::pool2d_output_shape("AvgPool2d", inputs[0], geometry_)};
}

ForwardResult AvgPool2d::forward(const ForwardArgs& args) const {
  const Tensor& x = args.inputs[0];
  Tensor y = Tensor::empty(infer_shapes(std::span<const Shape>(&x.shape(), 1))[0], x.dtype(), args.ctx);
  kernels::avg_pool2d_forward(args.ctx, x, geometry_, count_include_pad_, y);
  return {{y}, {shape_token(x, args.ctx)}};
}

std::vector<Tensor> AvgPool2d::backward(const BackwardArgs& args) const {
  if (!args.needs_input_grad[0]) return {Tensor()};
  const Tensor& dy = args.output_grads[0];
  Tensor dx = input_grad(args.saved[0], dy, args.ctx);
  kernels::avg_pool2d_backward(args.ctx, dy, geometry_, count_include_pad_, dx);
  return {dx};
}

LayerCost AvgPool2d::cost(std::span<const Shape> inputs, DType dtype) const {
  const Shape out = infer_shapes(inputs)[0];
  LayerCost c = window_cost(Layer::cost(inputs, dtype), inputs[0], out, geometry_.kernel);
  c.forward_flops += static_cast<double>(out.numel());  // one division per window
  return c;
}

// ---- AdaptiveAvgPool2d

AdaptiveAvgPool2d::AdaptiveAvgPool2d(const AdaptiveAvgPool2dOptions& o) : output_size_(o.output_size) {
  BATON_CHECK(o.output_size[0] >= 1 && o.output_size[1] >= 1, "AdaptiveAvgPool2d: output_size [", o.output_size[0],
              ", ", o.output_size[1], "] must be at least 1 in each dimension");
}

nlohmann::json AdaptiveAvgPool2d::config() const { return {{"output_size", pair_json(output_size_)}}; }

std::vector<Shape> AdaptiveAvgPool2d::infer_shapes(std::span<const Shape> inputs) const {
  const Shape& x = inputs[0];
  BATON_CHECK(x.rank() == 4, "AdaptiveAvgPool2d: input has shape ", x.str(), ", expected 4 dimensions [N, C, H, W]");
  BATON_CHECK(x[2] >= 1 && x[3] >= 1, "AdaptiveAvgPool2d: input has shape ", x.str(),
              ", expected at least one element per plane");
  return {Shape{x[0], x[1], output_size_[0], output_size_[1]}};
}

ForwardResult AdaptiveAvgPool2d::forward(const ForwardArgs& args) const {
  const Tensor& x = args.inputs[0];
  Tensor y = Tensor::empty(infer_shapes(std::span<const Shape>(&x.shape(), 1))[0], x.dtype(), args.ctx);
  kernels::adaptive_avg_pool2d_forward(args.ctx, x, y);
  return {{y}, {shape_token(x, args.ctx)}};
}

std::vector<Tensor> AdaptiveAvgPool2d::backward(const BackwardArgs& args) const {
  if (!args.needs_input_grad[0]) return {Tensor()};
  const Tensor& dy = args.output_grads[0];
  Tensor dx = input_grad(args.saved[0], dy, args.ctx);
  kernels::adaptive_avg_pool2d_backward(args.ctx, dy, dx);
  return {dx};
}

LayerCost AdaptiveAvgPool2d::cost(std::span<const Shape> inputs, DType dtype) const {
  LayerCost c = Layer::cost(inputs, dtype);
  const Shape& x = inputs[0];
  // Taps per plane: the window heights summed times the window widths summed.
  const auto window_sum = [](int64_t in, int64_t out) {
    int64_t sum = 0;
    for (int64_t o = 0; o < out; ++o)
      sum += kernels::adaptive_window_end(o, in, out) - kernels::adaptive_window_start(o, in, out);
    return sum;
  };
  const auto planes = static_cast<double>(x[0] * x[1]);
  const double taps =
      planes * static_cast<double>(window_sum(x[2], output_size_[0]) * window_sum(x[3], output_size_[1]));
  c.forward_flops = taps + planes * static_cast<double>(output_size_[0] * output_size_[1]);
  c.backward_flops = taps;
  return c;
}

// ---- registration

void register_pooling_layers(LayerRegistry& registry) {
  registry.add("MaxPool2d", [](const nlohmann::json& config) {
    const JsonConfig c(config, "MaxPool2d config", {"kernel_size", "stride", "padding", "dilation", "ceil_mode"});
    MaxPool2dOptions o;
    read_window(config, c, o);
    o.dilation = c.get_pair("dilation", o.dilation);
    return std::make_unique<MaxPool2d>(o);
  });
  registry.add("AvgPool2d", [](const nlohmann::json& config) {
    const JsonConfig c(config, "AvgPool2d config",
                       {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"});
    AvgPool2dOptions o;
    read_window(config, c, o);
    o.count_include_pad = c.get_bool("count_include_pad", o.count_include_pad);
    return std::make_unique<AvgPool2d>(o);
  });
  registry.add("AdaptiveAvgPool2d", [](const nlohmann::json& config) {
    const JsonConfig c(config, "AdaptiveAvgPool2d config", {"output_size"});
    AdaptiveAvgPool2dOptions o;
    o.output_size = c.get_pair("output_size");
    return std::make_unique<AdaptiveAvgPool2d>(o);
  });
}

}  // namespace baton::layers
