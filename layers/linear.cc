// Linear over kernels/gemm.h and kernels/bias.h.
#include "layers/linear.h"

#include "kernels/bias.h"
#include "kernels/gemm.h"
#include "layers/builtin_layers.h"
#include "layers/fan_in_init.h"
#include "layers/layer_support.h"
#include "runtime/graph/json_config.h"

namespace baton::layers {

Linear::Linear(const LinearOptions& options) : OptionsLayer(options) {
  BATON_CHECK(options.in_features >= 1, "Linear: in_features must be at least 1, got ", options.in_features);
  BATON_CHECK(options.out_features >= 1, "Linear: out_features must be at least 1, got ", options.out_features);
}

nlohmann::json Linear::config() const {
  return with_init_fields(
      {{"in_features", options().in_features}, {"out_features", options().out_features}, {"bias", options().bias}},
      options().init);
}

std::vector<Shape> Linear::infer_shapes(std::span<const Shape> inputs) const {
  BATON_CHECK(inputs.size() == 1, "Linear: expected 1 input, got ", inputs.size());
  const Shape& x = inputs[0];
  BATON_CHECK(x.rank() >= 2 && x[x.rank() - 1] == options().in_features, "Linear: input has shape ", x.str(),
              ", expected [N, ", options().in_features, "] (in_features ", options().in_features, ") or [N, ..., ",
              options().in_features, "] (applied over the last dimension)");
  std::vector<int64_t> dims = x.dims();
  dims.back() = options().out_features;
  return {Shape(std::move(dims))};
}

std::vector<TensorSpec> Linear::param_specs(std::span<const Shape> /*inputs*/) const {
  return weight_and_bias_specs(Shape{options().out_features, options().in_features}, options().in_features,
                               options().bias, options().init);
}

ForwardResult Linear::forward(const ForwardArgs& args) const {
  const Tensor x = as_rows(args.inputs[0]);
  const Shape y_shape = infer_shapes(std::span(&args.inputs[0].shape(), 1))[0];
  Tensor y = Tensor::empty(Shape{x.size(0), options().out_features}, x.dtype(), args.ctx);
  kernels::matmul(args.ctx, x, args.params[0], y, false, true);  // y = x · Wᵀ
  if (options().bias) kernels::bias_add(args.ctx, args.params[1], y);
  return {{y.shape() == y_shape ? y : y.reshape(y_shape)}, {x}};
}

std::vector<Tensor> Linear::backward(const BackwardArgs& args) const {
  const Tensor& x = args.saved[0];  // [rows, in]
  const Tensor dy = as_rows(args.output_grads[0]);
  Tensor dx;
  if (args.needs_input_grad[0]) {
    dx = Tensor::empty(x.shape(), x.dtype(), args.ctx);
    kernels::matmul(args.ctx, dy, args.params[0], dx, false, false);  // dx = dy · W
    const Shape& input_shape = args.output_grads[0].shape();
    if (input_shape.rank() > 2) {
      std::vector<int64_t> dims = input_shape.dims();
      dims.back() = options().in_features;
      dx = dx.reshape(Shape(std::move(dims)));
    }
  }
  kernels::matmul(args.ctx, dy, x, args.param_grads[0], true, false, 1.0, 1.0);  // dW += dyᵀ · x
  if (options().bias) kernels::bias_grad(args.ctx, dy, args.param_grads[1]);
  return {dx};
}

LayerCost Linear::cost(std::span<const Shape> inputs, DType dtype) const {
  LayerCost c = Layer::cost(inputs, dtype);
  const int64_t element = static_cast<int64_t>(dtype_size(dtype));
  const auto outputs = static_cast<double>(infer_shapes(inputs)[0].numel());
  c.forward_macs = outputs * static_cast<double>(options().in_features);
  c.forward_flops = 2 * c.forward_macs + (options().bias ? outputs : 0);
  c.backward_flops = 4 * c.forward_macs + (options().bias ? outputs : 0);
  c.saved_bytes = inputs[0].bytes(element);
  c.param_bytes =
      (options().out_features * options().in_features + (options().bias ? options().out_features : 0)) * element;
  return c;
}

void register_linear_layers(LayerRegistry& registry) {
  registry.add("Linear", [](const nlohmann::json& config) {
    const JsonConfig c(config, "Linear config", {"in_features", "out_features", "bias", "weight_init", "bias_init"});
    return std::make_unique<Linear>(LinearOptions{.in_features = c.get_int("in_features"),
                                                  .out_features = c.get_int("out_features"),
                                                  .bias = c.get_bool("bias", true),
                                                  .init = read_init_fields(c)});
  });
}

}  // namespace baton::layers
