// Loss layers over kernels/loss.h, kernels/reduce.h and kernels/elementwise.h; the incoming scalar
// gradient is applied on the device with kernels::scale_by_scalar.
#include "layers/loss.h"

#include "kernels/activation.h"
#include "kernels/elementwise.h"
#include "kernels/loss.h"
#include "kernels/reduce.h"
#include "layers/builtin_layers.h"
#include "layers/layer_support.h"
#include "runtime/graph/json_config.h"

namespace baton::layers {
namespace {

void check_floating(std::string_view layer, std::string_view what, DType dtype) {
  BATON_CHECK(is_floating(dtype), layer, ": ", what, " has dtype ", dtype_name(dtype),
              ", expected a floating dtype (f32, f64, f16 or bf16)");
}

// Loss costs: the scalar output's bytes in the loss dtype.
LayerCost loss_cost(DType dtype, double forward_flops, double backward_flops, int64_t saved_bytes) {
  LayerCost c;
  c.forward_flops = forward_flops;
  c.backward_flops = backward_flops;
  c.output_bytes = static_cast<int64_t>(dtype_size(kernels::reduction_dtype(dtype)));
  c.saved_bytes = saved_bytes;
  return c;
}

}  // namespace

// ---- SoftmaxCrossEntropy ----

SoftmaxCrossEntropy::SoftmaxCrossEntropy(SoftmaxCrossEntropyOptions options) : OptionsLayer(options) {
  BATON_CHECK(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0,
              "SoftmaxCrossEntropy: label_smoothing is ", options.label_smoothing, ", expected a value in [0, 1]");
}

nlohmann::json SoftmaxCrossEntropy::config() const { return {{"label_smoothing", options().label_smoothing}}; }

std::vector<Shape> SoftmaxCrossEntropy::infer_shapes(std::span<const Shape> inputs) const {
  check_input_count(type(), inputs, 2);
  const Shape &logits = inputs[0], &labels = inputs[1];
  BATON_CHECK(logits.rank() >= 2 && logits.numel() > 0 && (logits.rank() == 2 || logits.rank() == labels.rank() + 1),
              "SoftmaxCrossEntropy: the logits (input 0) have shape ", logits.str(),
              ", expected [N, C] with N, C >= 1 for labels [N], or [N, T, ..., C] for per-position labels [N, T, ...] "
              "(the labels have shape ",
              labels.str(), ")");
  const Shape expected(std::vector<int64_t>(logits.dims().begin(), logits.dims().end() - 1));
  BATON_CHECK(labels == expected, "SoftmaxCrossEntropy: the labels (input 1) have shape ", labels.str(), ", expected ",
              expected.str(), " (one label per row of the logits, shape ", logits.str(), ")");
  return {Shape{}};
}

std::vector<DType> SoftmaxCrossEntropy::infer_dtypes(std::span<const DType> inputs) const {
  BATON_CHECK(inputs.size() == 2, "SoftmaxCrossEntropy: got ", inputs.size(), " input dtype(s), expected 2");
  check_floating(type(), "the logits (input 0)", inputs[0]);
  BATON_CHECK(inputs[1] == DType::i32 || inputs[1] == DType::i64,
              "SoftmaxCrossEntropy: the labels (input 1) have dtype ", dtype_name(inputs[1]),
              ", expected i32 or i64 class indices");
  return {kernels::reduction_dtype(inputs[0])};
}

ForwardResult SoftmaxCrossEntropy::forward(const ForwardArgs& args) const {
  infer_shapes(shapes_of(args.inputs));
  const DType loss_dtype = infer_dtypes(dtypes_of(args.inputs))[0];
  // Per-position logits [N, T, ..., C] are rows [N T ..., C] of one mean: views, no copies.
  const Tensor logits = as_rows(args.inputs[0]), labels = as_flat(args.inputs[1]);
  Tensor loss = Tensor::empty(Shape{}, loss_dtype, args.ctx);
  Tensor probs = Tensor::empty(logits.shape(), logits.dtype(), args.ctx);
  kernels::softmax_cross_entropy_forward(args.ctx, logits, labels, options().label_smoothing, loss, probs);
  if (args.inputs[0].rank() == 2) return {{loss}, {probs, labels}};
  return {{loss}, {probs, labels, host_record(args.inputs[0].shape().dims())}};  // and the logits' shape
}

std::vector<Tensor> SoftmaxCrossEntropy::backward(const BackwardArgs& args) const {
  if (!args.needs_input_grad[0]) return {Tensor(), Tensor()};
  const Tensor &probs = args.saved[0], &labels = args.saved[1];
  Tensor dlogits = Tensor::empty(probs.shape(), probs.dtype(), args.ctx);
  kernels::softmax_cross_entropy_backward(args.ctx, probs, labels, options().label_smoothing, 1.0, dlogits);
  kernels::scale_by_scalar(args.ctx, dlogits, args.output_grads[0], dlogits);
  if (args.saved.size() == 2) return {dlogits, Tensor()};
  return {dlogits.reshape(Shape(read_host_record(args.saved[2]))), Tensor()};
}

// Per logit: max, subtract, exp, add, divide forward (the per-row log is not counted); subtract,
// scale by 1 / N and scale by the incoming gradient backward. Saves the probabilities.
LayerCost SoftmaxCrossEntropy::cost(std::span<const Shape> inputs, DType dtype) const {
  const auto n = static_cast<double>(inputs[0].numel());
  return loss_cost(dtype, 5 * n, 3 * n, inputs[0].bytes(static_cast<int64_t>(dtype_size(dtype))));
}

// ---- MSELoss ----

std::vector<Shape> MSELoss::infer_shapes(std::span<const Shape> inputs) const {
  check_input_count(type(), inputs, 2);
  BATON_CHECK(inputs[1] == inputs[0], "MSELoss: the target (input 1) has shape ", inputs[1].str(), ", expected ",
              inputs[0].str(), " (the shape of the prediction, input 0)");
  BATON_CHECK(inputs[0].numel() > 0, "MSELoss: the inputs have shape ", inputs[0].str(),
              ", expected at least one element (the mean of nothing is undefined)");
  return {Shape{}};
}

std::vector<DType> MSELoss::infer_dtypes(std::span<const DType> inputs) const {
  BATON_CHECK(inputs.size() == 2, "MSELoss: got ", inputs.size(), " input dtype(s), expected 2");
  check_floating(type(), "the prediction (input 0)", inputs[0]);
  BATON_CHECK(inputs[1] == inputs[0], "MSELoss: the target (input 1) has dtype ", dtype_name(inputs[1]), ", expected ",
              dtype_name(inputs[0]), " (the dtype of the prediction, input 0)");
  return {kernels::reduction_dtype(inputs[0])};
}

ForwardResult MSELoss::forward(const ForwardArgs& args) const {
  infer_shapes(shapes_of(args.inputs));
  const DType loss_dtype = infer_dtypes(dtypes_of(args.inputs))[0];
  const Tensor &prediction = args.inputs[0], &target = args.inputs[1];
  Tensor diff = Tensor::empty(prediction.shape(), prediction.dtype(), args.ctx);
  kernels::sub(args.ctx, prediction, target, diff);
  Tensor loss = Tensor::empty(Shape{}, loss_dtype, args.ctx);
  kernels::sum_squares(args.ctx, diff, loss);
  kernels::scale(args.ctx, loss, 1.0 / static_cast<double>(diff.numel()), loss);
  return {{loss}, {diff}};
}

// d/dprediction = 2 (prediction - target) / n · g, d/dtarget the negation.
std::vector<Tensor> MSELoss::backward(const BackwardArgs& args) const {
  const Tensor& diff = args.saved[0];
  const double factor = 2.0 / static_cast<double>(diff.numel());
  std::vector<Tensor> grads;
  for (int i = 0; i < 2; ++i) {
    Tensor g;
    if (args.needs_input_grad[static_cast<size_t>(i)]) {
      g = Tensor::empty(diff.shape(), diff.dtype(), args.ctx);
      kernels::scale_by_scalar(args.ctx, diff, args.output_grads[0], i == 0 ? factor : -factor, g);
    }
    grads.push_back(g);
  }
  return grads;
}

// Per element: subtract, square, add forward; one multiply per input gradient backward. Saves the difference.
LayerCost MSELoss::cost(std::span<const Shape> inputs, DType dtype) const {
  const auto n = static_cast<double>(inputs[0].numel());
  return loss_cost(dtype, 3 * n, 2 * n, inputs[0].bytes(static_cast<int64_t>(dtype_size(dtype))));
}

// ---- registration ----

void register_loss_layers(LayerRegistry& registry) {
  registry.add("SoftmaxCrossEntropy", [](const nlohmann::json& config) {
    const JsonConfig c(config, "SoftmaxCrossEntropy config", {"label_smoothing"});
    return std::make_unique<SoftmaxCrossEntropy>(SoftmaxCrossEntropyOptions{
        .label_smoothing = c.get_double("label_smoothing", SoftmaxCrossEntropyOptions{}.label_smoothing)});
  });
  registry.add("MSELoss", [](const nlohmann::json& config) {
    JsonConfig(config, "MSELoss config", {});
    return std::make_unique<MSELoss>();
  });
}

}  // namespace baton::layers
