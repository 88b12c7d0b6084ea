// Loss layers: float64 gradient checks (integer labels pass through the checker; the output is a
// scalar whose random weight is the incoming gradient, so the device-scalar scaling is exercised),
// loss values against float64 references written here, bad inputs, costs and JSON round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "layers/builtin_layers.h"
#include "layers/loss.h"
#include "runtime/core/error.h"
#include "tests/layers/layer_test_util.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

// Labels in [0, classes) of `dtype`.
Tensor random_labels(int64_t rows, int64_t classes, DType dtype, const Stream& s, uint64_t seed) {
  return testing::random_tensor(Shape{rows}, dtype, s, seed, 0.0, static_cast<double>(classes));
}

// Forward then backward with output gradient `grad` (a scalar); returns {loss, input gradients...}.
struct Pass {
  double loss;
  std::vector<Tensor> grads;
};
Pass loss_run(const Layer& layer, Context& ctx, const std::vector<Tensor>& inputs, double grad,
              std::vector<bool> needs = {true, true}) {
  const ForwardResult r = testing::forward_once(layer, ctx, inputs);
  const Tensor g = testing::from_doubles({grad}, Shape{}, r.outputs[0].dtype(), ctx.stream());
  Pass p;
  p.loss = testing::to_doubles(r.outputs[0], ctx.stream())[0];
  p.grads = testing::backward_once(layer, ctx, {&g, 1}, r.saved, std::move(needs));
  return p;
}

TEST(SoftmaxCrossEntropyLayer, GradientCheckWithAndWithoutSmoothing) {
  const Stream s = Stream::create(Device::cpu());
  const int64_t shapes[][2] = {{1, 3}, {4, 5}, {7, 10}};
  for (double eps : {0.0, 0.1}) {
    for (DType label_dtype : {DType::i64, DType::i32}) {
      for (const auto& [rows, classes] : shapes) {
        SCOPED_TRACE(::testing::Message() << "eps " << eps << " labels " << dtype_name(label_dtype) << " [" << rows
                                          << ", " << classes << "]");
        const Tensor logits = testing::random_tensor(Shape{rows, classes}, DType::f64, s, 60, -3.0, 3.0);
        const Tensor labels = random_labels(rows, classes, label_dtype, s, 61);
        EXPECT_TRUE(testing::check_gradients(SoftmaxCrossEntropy({.label_smoothing = eps}), {logits, labels}));
      }
    }
  }
}

TEST(SoftmaxCrossEntropyLayer, LossAndGradientMatchTheDefinition) {
  Context ctx(Device::cpu());
  const int64_t rows = 3, classes = 4;
  const double eps = 0.2, grad = -1.75;
  const Tensor logits = testing::random_tensor(Shape{rows, classes}, DType::f32, ctx.stream(), 62, -2.0, 2.0);
  const Tensor labels = testing::from_doubles({3, 0, 2}, Shape{rows}, DType::i64, ctx.stream());
  const std::vector<double> x = testing::to_doubles(logits, ctx.stream()), y = {3, 0, 2};
  double loss = 0;
  std::vector<double> dx(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double z = 0;
    for (int64_t c = 0; c < classes; ++c) z += std::exp(x[r * classes + c]);
    for (int64_t c = 0; c < classes; ++c) {
      const double p = std::exp(x[r * classes + c]) / z;
      const double q = (c == static_cast<int64_t>(y[r]) ? 1 - eps : 0) + eps / classes;
      loss -= q * std::log(p) / rows;
      dx[r * classes + c] = grad * (p - q) / rows;
    }
  }
  const Pass p = loss_run(SoftmaxCrossEntropy({.label_smoothing = eps}), ctx, {logits, labels}, grad);
  EXPECT_NEAR(p.loss, loss, 1e-5);
  ASSERT_EQ(p.grads.size(), 2u);
  EXPECT_FALSE(p.grads[1].defined()) << "labels take no gradient";
  EXPECT_TRUE(testing::all_close(testing::to_doubles(p.grads[0], ctx.stream()), dx, 1e-5, 1e-6));
  EXPECT_FALSE(loss_run(SoftmaxCrossEntropy(), ctx, {logits, labels}, grad, {false, false}).grads[0].defined());
}

TEST(SoftmaxCrossEntropyLayer, ShapesDtypesAndFlags) {
  const SoftmaxCrossEntropy layer;
  EXPECT_EQ(layer.num_inputs(), 2);
  EXPECT_TRUE(layer.differentiable_input(0));
  EXPECT_FALSE(layer.differentiable_input(1));
  const Shape in[] = {Shape{8, 10}, Shape{8}};
  EXPECT_EQ(layer.infer_shapes(in)[0], Shape{});
  const DType f16[] = {DType::f16, DType::i32}, f64[] = {DType::f64, DType::i64};
  EXPECT_EQ(layer.infer_dtypes(f16)[0], DType::f32);
  EXPECT_EQ(layer.infer_dtypes(f64)[0], DType::f64);
  const LayerCost c = layer.cost(in, DType::f32);
  EXPECT_EQ(c.output_bytes, 4);
  EXPECT_EQ(c.saved_bytes, 320) << "the probabilities";
  EXPECT_EQ(c.forward_flops, 400);
  EXPECT_EQ(c.backward_flops, 240);
}

TEST(SoftmaxCrossEntropyLayer, BadInputsNameTheProblem) {
  const SoftmaxCrossEntropy layer;
  const Shape rows[] = {Shape{8, 10}, Shape{7}};
  EXPECT_ERROR_MENTIONS("the labels (input 1) have shape [7], expected [8]", layer.infer_shapes(rows));
  const Shape column[] = {Shape{8, 10}, Shape{8, 1}};
  EXPECT_ERROR_MENTIONS("the labels (input 1) have shape [8, 1], expected [8]", layer.infer_shapes(column));
  const Shape logits4d[] = {Shape{8, 10, 1, 1}, Shape{8}};
  EXPECT_ERROR_MENTIONS("the logits (input 0) have shape [8, 10, 1, 1], expected [N, C]", layer.infer_shapes(logits4d));
  const DType float_labels[] = {DType::f32, DType::f32};
  EXPECT_ERROR_MENTIONS("the labels (input 1) have dtype f32, expected i32 or i64", layer.infer_dtypes(float_labels));
  const DType int_logits[] = {DType::i64, DType::i64};
  EXPECT_ERROR_MENTIONS("the logits (input 0) has dtype i64", layer.infer_dtypes(int_logits));

  Context ctx(Device::cpu());
  const Tensor logits = testing::random_tensor(Shape{3, 4}, DType::f32, ctx.stream(), 63);
  const Tensor float_labels_t = testing::from_doubles({1, 2, 3}, Shape{3}, DType::f32, ctx.stream());
  EXPECT_ERROR_MENTIONS("expected i32 or i64", loss_run(layer, ctx, {logits, float_labels_t}, 1.0));
  const Tensor bad = testing::from_doubles({1, 4, 0}, Shape{3}, DType::i64, ctx.stream());
  EXPECT_ERROR_MENTIONS("argument 'labels' has 1 value(s) outside [0, 4), the first is 4 at row 1",
                        loss_run(layer, ctx, {logits, bad}, 1.0));
  EXPECT_ERROR_MENTIONS("label_smoothing is 1.5", SoftmaxCrossEntropy({.label_smoothing = 1.5}));
  EXPECT_ERROR_MENTIONS("label_smoothing is -0.1",
                        builtin_layers().create("SoftmaxCrossEntropy", {{"label_smoothing", -0.1}}));
}

TEST(MSELoss, GradientCheckForBothInputs) {
  const Stream s = Stream::create(Device::cpu());
  for (const Shape& shape : {Shape{1}, Shape{5, 3}, Shape{2, 3, 4, 4}}) {
    const Tensor prediction = testing::random_tensor(shape, DType::f64, s, 70);
    const Tensor target = testing::random_tensor(shape, DType::f64, s, 71);
    EXPECT_TRUE(testing::check_gradients(MSELoss(), {prediction, target})) << shape.str();
  }
}

TEST(MSELoss, LossAndGradientsMatchTheDefinition) {
  Context ctx(Device::cpu());
  const Tensor a = testing::random_tensor(Shape{4, 5}, DType::f32, ctx.stream(), 72);
  const Tensor b = testing::random_tensor(Shape{4, 5}, DType::f32, ctx.stream(), 73);
  const std::vector<double> av = testing::to_doubles(a, ctx.stream()), bv = testing::to_doubles(b, ctx.stream());
  const double grad = 0.6;
  double loss = 0;
  std::vector<double> da(av.size()), db(av.size());
  for (size_t i = 0; i < av.size(); ++i) {
    loss += (av[i] - bv[i]) * (av[i] - bv[i]) / 20;
    da[i] = grad * 2 * (av[i] - bv[i]) / 20;
    db[i] = -da[i];
  }
  const Pass p = loss_run(MSELoss(), ctx, {a, b}, grad);
  EXPECT_NEAR(p.loss, loss, 1e-6);
  EXPECT_TRUE(testing::all_close(testing::to_doubles(p.grads[0], ctx.stream()), da, 1e-5, 1e-7));
  EXPECT_TRUE(testing::all_close(testing::to_doubles(p.grads[1], ctx.stream()), db, 1e-5, 1e-7));
  const Pass only_target = loss_run(MSELoss(), ctx, {a, b}, grad, {false, true});
  EXPECT_FALSE(only_target.grads[0].defined());
  EXPECT_TRUE(testing::all_close(testing::to_doubles(only_target.grads[1], ctx.stream()), db, 1e-5, 1e-7));
}

TEST(MSELoss, BadInputsNameTheProblem) {
  const MSELoss layer;
  const Shape shapes[] = {Shape{4, 5}, Shape{4, 6}};
  EXPECT_ERROR_MENTIONS("MSELoss: the target (input 1) has shape [4, 6], expected [4, 5]", layer.infer_shapes(shapes));
  const Shape one[] = {Shape{4, 5}};
  EXPECT_ERROR_MENTIONS("MSELoss: got 1 input(s), expected 2", layer.infer_shapes(one));
  const DType dtypes[] = {DType::f32, DType::f64};
  EXPECT_ERROR_MENTIONS("MSELoss: the target (input 1) has dtype f64, expected f32", layer.infer_dtypes(dtypes));
  const DType f16[] = {DType::f16, DType::f16};
  EXPECT_EQ(layer.infer_dtypes(f16)[0], DType::f32);
  const LayerCost c = layer.cost(shapes, DType::f16);
  EXPECT_EQ(c.output_bytes, 4);
  EXPECT_EQ(c.saved_bytes, 40) << "the difference, in f16";
}

TEST(Losses, RoundTripThroughTheRegistry) {
  const SoftmaxCrossEntropy smoothed({.label_smoothing = 0.1});
  const MSELoss mse;
  for (const Layer* layer : std::initializer_list<const Layer*>{&smoothed, &mse}) {
    const auto rebuilt = builtin_layers().create(layer->type(), layer->config());
    EXPECT_EQ(rebuilt->type(), layer->type());
    EXPECT_EQ(rebuilt->config(), layer->config());
  }
  EXPECT_EQ(builtin_layers().create("SoftmaxCrossEntropy", nlohmann::json::object())->config(),
            (nlohmann::json{{"label_smoothing", 0.0}}));
  EXPECT_ERROR_MENTIONS("unknown field 'reduction'", builtin_layers().create("MSELoss", {{"reduction", "sum"}}));
}

}  // namespace
}  // namespace baton::layers
