// Linear: float64 gradient checks for input, weight and bias over shapes, with and without bias;
// parameter specs and initialisers; shape inference and its errors; invalid options; JSON round
// trip; cost.
#include <gtest/gtest.h>

#include <cmath>

#include "layers/builtin_layers.h"
#include "layers/linear.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/layer_check.h"
#include "tests/support/layer_expectations.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

TEST(LinearLayer, GradientCheck) {
  const Stream s = Stream::create(Device::cpu());
  struct Case {
    int64_t batch, in, out;
  };
  uint64_t seed = 1;
  for (const Case c : {Case{1, 1, 1}, Case{4, 7, 3}, Case{2, 16, 10}, Case{9, 5, 12}}) {
    for (const bool bias : {true, false}) {
      SCOPED_TRACE(std::to_string(c.batch) + "x" + std::to_string(c.in) + " -> " + std::to_string(c.out) +
                   (bias ? "" : " no bias"));
      const Linear linear({.in_features = c.in, .out_features = c.out, .bias = bias});
      EXPECT_TRUE(
          testing::check_gradients(linear, {testing::random_tensor(Shape{c.batch, c.in}, DType::f64, s, seed++)}));
    }
  }
}

TEST(LinearLayer, ShapesAndParameterSpecs) {
  const Linear linear({.in_features = 2048, .out_features = 1000});
  const Shape in[] = {Shape{32, 2048}};
  EXPECT_EQ(linear.infer_shapes(in)[0], (Shape{32, 1000}));
  testing::expect_uniform_weight_and_bias(linear.param_specs(in), Shape{1000, 2048}, Shape{1000},
                                          1.0 / std::sqrt(2048.0));
  EXPECT_EQ(Linear({.in_features = 3, .out_features = 2, .bias = false}).param_specs(in).size(), 1u);
}

TEST(LinearLayer, SavesTheInputAndSkipsUnneededInputGradient) {
  Context ctx(Device::cpu());
  const Linear linear({.in_features = 3, .out_features = 2});
  const Tensor x = testing::random_tensor(Shape{4, 3}, DType::f64, ctx.stream(), 1);
  const Tensor params[] = {testing::random_tensor(Shape{2, 3}, DType::f64, ctx.stream(), 2),
                           testing::random_tensor(Shape{2}, DType::f64, ctx.stream(), 3)};
  const ForwardResult r =
      linear.forward({.ctx = ctx, .mode = Mode::train, .inputs = std::span(&x, 1), .params = params, .buffers = {}});
  ASSERT_EQ(r.saved.size(), 1u);
  EXPECT_EQ(r.saved[0].data_ptr(), x.data_ptr());
  const Tensor grads[] = {Tensor::empty(Shape{2, 3}, DType::f64, ctx), Tensor::empty(Shape{2}, DType::f64, ctx)};
  for (Tensor g : grads) g.fill(0.0, ctx.stream());
  const Tensor dy = testing::random_tensor(Shape{4, 2}, DType::f64, ctx.stream(), 4);
  ASSERT_NO_FATAL_FAILURE(testing::backward_params_only(linear, ctx, dy, r.saved, params, grads));
  double sum = 0;
  for (double v : testing::to_doubles(grads[1], ctx.stream())) sum += std::abs(v);
  EXPECT_GT(sum, 0);
}

TEST(LinearLayer, InferShapesRejectsMismatches) {
  const Linear linear({.in_features = 8, .out_features = 4});
  const Shape wrong[] = {Shape{2, 7}};
  EXPECT_ERROR_MENTIONS("Linear: input has shape [2, 7], expected [N, 8] (in_features 8)", linear.infer_shapes(wrong));
  const Shape rank4[] = {Shape{2, 8, 1, 1}};
  EXPECT_ERROR_MENTIONS("Linear: input has shape [2, 8, 1, 1], expected [N, 8]", linear.infer_shapes(rank4));
}

TEST(LinearLayer, RejectsInvalidOptionsAndConfigs) {
  EXPECT_ERROR_MENTIONS("Linear: in_features must be at least 1, got 0", Linear({.in_features = 0, .out_features = 2}));
  EXPECT_ERROR_MENTIONS("Linear: out_features must be at least 1, got -1",
                        Linear({.in_features = 2, .out_features = -1}));
  const LayerRegistry& r = builtin_layers();
  EXPECT_ERROR_MENTIONS("field 'in_features' is 2.5, expected an integer",
                        r.create("Linear", {{"in_features", 2.5}, {"out_features", 3}}));
  EXPECT_ERROR_MENTIONS("missing required field 'out_features'", r.create("Linear", {{"in_features", 2}}));
  EXPECT_ERROR_MENTIONS("unknown field 'in_channels'", r.create("Linear", {{"in_channels", 2}, {"out_features", 3}}));
}

TEST(LinearLayer, JsonRoundTrip) {
  const Linear linear({.in_features = 5, .out_features = 7, .bias = false});
  const std::unique_ptr<Layer> again = builtin_layers().create(linear.type(), linear.config());
  EXPECT_EQ(again->type(), "Linear");
  EXPECT_EQ(again->config(), linear.config());
  EXPECT_EQ(dynamic_cast<const Linear&>(*again).options(), linear.options());
  EXPECT_TRUE(dynamic_cast<const Linear&>(*builtin_layers().create("Linear", {{"in_features", 2}, {"out_features", 3}}))
                  .options()
                  .bias);
}

TEST(LinearLayer, CostCountsMacsAndBytes) {
  const Linear linear({.in_features = 2048, .out_features = 1000});
  const Shape in[] = {Shape{32, 2048}};
  const LayerCost c = linear.cost(in, DType::f32);
  EXPECT_DOUBLE_EQ(c.forward_macs, 32.0 * 2048 * 1000);
  EXPECT_DOUBLE_EQ(c.forward_flops, 2 * 32.0 * 2048 * 1000 + 32 * 1000);
  EXPECT_DOUBLE_EQ(c.backward_flops, 4 * 32.0 * 2048 * 1000 + 32 * 1000);
  EXPECT_EQ(c.output_bytes, 32 * 1000 * 4);
  EXPECT_EQ(c.saved_bytes, 32 * 2048 * 4);
  EXPECT_EQ(c.param_bytes, (1000 * 2048 + 1000) * 4);
  EXPECT_EQ(c.workspace_bytes, 0);
}

}  // namespace
}  // namespace baton::layers
