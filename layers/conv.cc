// Conv2d over kernels/conv.h.
#include "layers/conv.h"

#include "kernels/conv.h"
#include "layers/builtin_layers.h"
#include "layers/fan_in_init.h"
#include "runtime/graph/json_config.h"

namespace baton::layers {
namespace {

std::string pair_str(const std::array<int64_t, 2>& v) { return detail::concat("[", v[0], ", ", v[1], "]"); }

}  // namespace

Conv2d::Conv2d(const Conv2dOptions& options) : OptionsLayer(options) {
  const Conv2dOptions& o = options;
  BATON_CHECK(o.in_channels >= 1, "Conv2d: in_channels must be at least 1, got ", o.in_channels);
  BATON_CHECK(o.out_channels >= 1, "Conv2d: out_channels must be at least 1, got ", o.out_channels);
  BATON_CHECK(o.kernel_size[0] >= 1 && o.kernel_size[1] >= 1, "Conv2d: kernel_size must be at least 1, got ",
              pair_str(o.kernel_size));
  BATON_CHECK(o.stride[0] >= 1 && o.stride[1] >= 1, "Conv2d: stride must be at least 1, got ", pair_str(o.stride));
  BATON_CHECK(o.padding[0] >= 0 && o.padding[1] >= 0, "Conv2d: padding must not be negative, got ",
              pair_str(o.padding));
  BATON_CHECK(o.dilation[0] >= 1 && o.dilation[1] >= 1, "Conv2d: dilation must be at least 1, got ",
              pair_str(o.dilation));
  BATON_CHECK(o.groups >= 1, "Conv2d: groups must be at least 1, got ", o.groups);
  BATON_CHECK(o.in_channels % o.groups == 0, "Conv2d: groups ", o.groups, " does not divide in_channels ",
              o.in_channels);
  BATON_CHECK(o.out_channels % o.groups == 0, "Conv2d: groups ", o.groups, " does not divide out_channels ",
              o.out_channels);
}

kernels::Conv2dParams Conv2d::params() const {
  return {.stride = options().stride,
          .padding = options().padding,
          .dilation = options().dilation,
          .groups = options().groups};
}

nlohmann::json Conv2d::config() const {
  const Conv2dOptions& o = options();
  return with_init_fields({{"in_channels", o.in_channels},
                           {"out_channels", o.out_channels},
                           {"kernel_size", pair_json(o.kernel_size)},
                           {"stride", pair_json(o.stride)},
                           {"padding", pair_json(o.padding)},
                           {"dilation", pair_json(o.dilation)},
                           {"groups", o.groups},
                           {"bias", o.bias}},
                          o.init);
}

std::vector<Shape> Conv2d::infer_shapes(std::span<const Shape> inputs) const {
  BATON_CHECK(inputs.size() == 1, "Conv2d: expected 1 input, got ", inputs.size());
  const Shape& x = inputs[0];
  BATON_CHECK(x.rank() == 4 && x[1] == options().in_channels, "Conv2d: input has shape ", x.str(), ", expected [N, ",
              options().in_channels, ", H, W] (in_channels ", options().in_channels, ")");
  const Shape w{options().out_channels, options().in_channels / options().groups, options().kernel_size[0],
                options().kernel_size[1]};
  try {
    return {kernels::conv2d_output_shape(x, w, params())};
  } catch (Error& e) {
    e.add_context("in Conv2d " + config().dump());
    throw;
  }
}

std::vector<TensorSpec> Conv2d::param_specs(std::span<const Shape> /*inputs*/) const {
  const Conv2dOptions& o = options();
  const int64_t fan_in = o.in_channels / o.groups * o.kernel_size[0] * o.kernel_size[1];
  return weight_and_bias_specs(Shape{o.out_channels, o.in_channels / o.groups, o.kernel_size[0], o.kernel_size[1]},
                               fan_in, o.bias, o.init);
}

ForwardResult Conv2d::forward(const ForwardArgs& args) const {
  const Tensor& x = args.inputs[0];
  // The CPU engine's float32 activations are channels-last from the first convolution on (docs/cpu.md),
  // where the kernels take them.
  const bool channels_last =
      args.ctx.channels_last() && kernels::conv2d_takes_channels_last(args.ctx.device(), x.dtype());
  Tensor y = Tensor::empty(infer_shapes(std::span(&x.shape(), 1))[0], x.dtype(), args.ctx.stream(),
                           channels_last ? MemoryFormat::channels_last : MemoryFormat::contiguous);
  kernels::conv2d_forward(args.ctx, x, args.params[0], options().bias ? args.params[1] : Tensor(), params(), y);
  return {{y}, {x}};
}

std::vector<Tensor> Conv2d::backward(const BackwardArgs& args) const {
  const Tensor& x = args.saved[0];
  const Tensor& dy = args.output_grads[0];
  Tensor dx;
  if (args.needs_input_grad[0]) {
    dx = Tensor::empty(x.shape(), x.dtype(), args.ctx.stream(), x.format());
    kernels::conv2d_backward_data(args.ctx, dy, args.params[0], params(), dx);
  }
  kernels::conv2d_backward_filter(args.ctx, x, dy, params(), args.param_grads[0]);
  if (options().bias) kernels::conv2d_backward_bias(args.ctx, dy, args.param_grads[1]);
  return {dx};
}

LayerCost Conv2d::cost(std::span<const Shape> inputs, DType dtype) const {
  LayerCost c = Layer::cost(inputs, dtype);
  const Conv2dOptions& o = options();
  const Shape y = infer_shapes(inputs)[0];
  const auto outputs = static_cast<double>(y.numel());
  const int64_t element = static_cast<int64_t>(dtype_size(dtype));
  const int64_t taps = o.in_channels / o.groups * o.kernel_size[0] * o.kernel_size[1];
  c.forward_macs = outputs * static_cast<double>(taps);
  c.forward_flops = 2 * c.forward_macs + (o.bias ? outputs : 0);
  c.backward_flops = 4 * c.forward_macs + (o.bias ? outputs : 0);
  c.saved_bytes = inputs[0].bytes(element);
  int64_t params = 0;
  for (const TensorSpec& spec : param_specs(inputs)) params += spec.shape.numel();
  c.param_bytes = params * element;
  const bool direct = o.kernel_size == std::array<int64_t, 2>{1, 1} && o.stride == std::array<int64_t, 2>{1, 1} &&
                      o.padding == std::array<int64_t, 2>{0, 0};
  c.workspace_bytes = direct ? 0 : taps * y[2] * y[3] * element;
  return c;
}

void register_conv_layers(LayerRegistry& registry) {
  registry.add("Conv2d", [](const nlohmann::json& config) {
    const JsonConfig c(config, "Conv2d config",
                       {"in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias",
                        "weight_init", "bias_init"});
    return std::make_unique<Conv2d>(Conv2dOptions{.in_channels = c.get_int("in_channels"),
                                                  .out_channels = c.get_int("out_channels"),
                                                  .kernel_size = c.get_pair("kernel_size"),
                                                  .stride = c.get_pair("stride", {1, 1}),
                                                  .padding = c.get_pair("padding", {0, 0}),
                                                  .dilation = c.get_pair("dilation", {1, 1}),
                                                  .groups = c.get_int("groups", 1),
                                                  .bias = c.get_bool("bias", true),
                                                  .init = read_init_fields(c)});
  });
}

}  // namespace baton::layers
