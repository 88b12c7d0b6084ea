// Activation layers over kernels/elementwise.h.
#include "layers/activation.h"

#include "kernels/elementwise.h"
#include "layers/builtin_layers.h"
#include "runtime/graph/json_config.h"

namespace baton::layers {

std::vector<Shape> ReLU::infer_shapes(std::span<const Shape> inputs) const { return {inputs[0]}; }

ForwardResult ReLU::forward(const ForwardArgs& args) const {
  const Tensor& x = args.inputs[0];
  Tensor y = Tensor::empty(x.shape(), x.dtype(), args.ctx);
  kernels::relu_forward(args.ctx, x, y);
  return {{y}, {y}};
}

std::vector<Tensor> ReLU::backward(const BackwardArgs& args) const {
  if (!args.needs_input_grad[0]) return {Tensor()};
  const Tensor& y = args.saved[0];
  Tensor dx = Tensor::empty(y.shape(), y.dtype(), args.ctx);
  kernels::relu_backward(args.ctx, y, args.output_grads[0], dx);
  return {dx};
}

LayerCost ReLU::cost(std::span<const Shape> inputs, DType dtype) const {
  LayerCost c = Layer::cost(inputs, dtype);
  c.forward_flops = static_cast<double>(inputs[0].numel());
  c.backward_flops = c.forward_flops;
  c.saved_bytes = c.output_bytes;
  return c;
}

void register_activation_layers(LayerRegistry& registry) {
  registry.add("ReLU", [](const nlohmann::json& config) {
    JsonConfig(config, "ReLU config", {});
    return std::make_unique<ReLU>();
  });
}

}  // namespace baton::layers
