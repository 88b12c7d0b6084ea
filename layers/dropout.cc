// Dropout over kernels/dropout.h; the seed is saved as a host record for backward.
#include "layers/dropout.h"

#include <bit>
#include <cstdint>

#include "kernels/dropout.h"
#include "layers/builtin_layers.h"
#include "layers/layer_support.h"
#include "runtime/graph/json_config.h"

namespace baton::layers {

Dropout::Dropout(DropoutOptions options) : OptionsLayer(options) {
  BATON_CHECK(options.p >= 0.0 && options.p < 1.0, "Dropout: p is ", options.p,
              ", expected a drop probability in [0, 1)");
}

nlohmann::json Dropout::config() const { return {{"p", options().p}}; }

std::vector<Shape> Dropout::infer_shapes(std::span<const Shape> inputs) const {
  check_input_count(type(), inputs, 1);
  return {inputs[0]};
}

ForwardResult Dropout::forward(const ForwardArgs& args) const {
  const Tensor& x = args.inputs[0];
  if (args.mode == Mode::eval || options().p == 0.0) return {{x}, {}};
  Tensor y = Tensor::empty(x.shape(), x.dtype(), args.ctx);
  kernels::dropout_forward(args.ctx, x, options().p, args.seed, y);
  const int64_t seed = std::bit_cast<int64_t>(args.seed);
  return {{y}, {host_record({&seed, 1})}};
}

std::vector<Tensor> Dropout::backward(const BackwardArgs& args) const {
  if (!args.needs_input_grad[0]) return {Tensor()};
  const Tensor& dy = args.output_grads[0];
  if (args.saved.empty()) return {dy};  // eval mode or p = 0: the identity
  const auto seed = std::bit_cast<uint64_t>(read_host_record(args.saved[0]).at(0));
  Tensor dx = Tensor::empty(dy.shape(), dy.dtype(), args.ctx);
  kernels::dropout_backward(args.ctx, dy, options().p, seed, dx);
  return {dx};
}

LayerCost Dropout::cost(std::span<const Shape> inputs, DType dtype) const {
  LayerCost c = Layer::cost(inputs, dtype);
  c.forward_flops = static_cast<double>(inputs[0].numel());
  c.backward_flops = c.forward_flops;
  return c;
}

void register_dropout_layers(LayerRegistry& registry) {
  registry.add("Dropout", [](const nlohmann::json& config) {
    const JsonConfig c(config, "Dropout config", {"p"});
    return std::make_unique<Dropout>(DropoutOptions{.p = c.get_double("p", DropoutOptions{}.p)});
  });
}

}  // namespace baton::layers
