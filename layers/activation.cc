// Activation layers over kernels/elementwise.h (ReLU) and kernels/activation.h.
#include "layers/activation.h"

#include "kernels/activation.h"
#include "kernels/elementwise.h"
#include "kernels/layout.h"
#include "layers/builtin_layers.h"
#include "layers/layer_support.h"
#include "runtime/graph/json_config.h"

namespace baton::layers {

std::vector<Shape> PointwiseActivation::infer_shapes(std::span<const Shape> inputs) const {
  check_input_count(type(), inputs, 1);
  return {inputs[0]};
}

ForwardResult PointwiseActivation::forward(const ForwardArgs& args) const {
  const Tensor& x = args.inputs[0];
  Tensor y = Tensor::empty(x.shape(), x.dtype(), args.ctx.stream(), x.format());
  ops_.forward(args.ctx, x, y);
  return {{y}, {ops_.saves_input ? x : y}};
}

std::vector<Tensor> PointwiseActivation::backward(const BackwardArgs& args) const {
  if (!args.needs_input_grad[0]) return {Tensor()};
  const Tensor& saved = args.saved[0];
  Tensor dx = Tensor::empty(saved.shape(), saved.dtype(), args.ctx.stream(), saved.format());
  ops_.backward(args.ctx, saved, kernels::to_memory_format(args.ctx, args.output_grads[0], saved.format()), dx);
  return {dx};
}

// One tensor of the output's size is saved.
LayerCost PointwiseActivation::cost(std::span<const Shape> inputs, DType dtype) const {
  LayerCost c = Layer::cost(inputs, dtype);
  const auto n = static_cast<double>(inputs[0].numel());
  c.forward_flops = ops_.forward_flops * n;
  c.backward_flops = ops_.backward_flops * n;
  c.saved_bytes = c.output_bytes;
  return c;
}

ReLU::ReLU() : PointwiseActivation({kernels::relu_forward, kernels::relu_backward, false, 1, 1}) {}
ReLU6::ReLU6() : PointwiseActivation({kernels::relu6_forward, kernels::relu6_backward, true, 2, 2}) {}
Sigmoid::Sigmoid() : PointwiseActivation({kernels::sigmoid_forward, kernels::sigmoid_backward, false, 4, 3}) {}
Tanh::Tanh() : PointwiseActivation({kernels::tanh_forward, kernels::tanh_backward, false, 4, 4}) {}

namespace {

// A factory for an activation without options (its config must be empty).
template <typename L>
void register_pointwise(LayerRegistry& registry) {
  const std::string type(L().type());
  registry.add(type, [type](const nlohmann::json& config) {
    JsonConfig(config, type + " config", {});
    return std::make_unique<L>();
  });
}

}  // namespace

void register_activation_layers(LayerRegistry& registry) {
  register_pointwise<ReLU>(registry);
  register_pointwise<ReLU6>(registry);
  register_pointwise<Sigmoid>(registry);
  register_pointwise<Tanh>(registry);
}

}  // namespace baton::layers
