// Convolution on the CPU against the naive float64 reference (tests/kernels/conv_reference.h): forward
// with and without bias, the data gradient into a poisoned tensor, the filter and bias gradients
// accumulated onto random values, f32 and f64; output shapes and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/conv.h"
#include "kernels/cpu_engine.h"
#include "tests/kernels/conv_backward_check.h"
#include "tests/kernels/conv_reference.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::ConvCase;

// f64 sums differ from the reference only by rounding; f32 by float accumulation over at most a few
// hundred terms of magnitude <= 1.
double tolerance(DType dtype) { return dtype == DType::f64 ? 1e-12 : 2e-5; }

class ConvCpu : public ::testing::Test {
 protected:
  Tensor random(const Shape& shape, DType dtype, uint64_t seed) {
    return testing::random_tensor(shape, dtype, ctx.stream(), seed);
  }
  Tensor poisoned(const Shape& shape, DType dtype) {
    const Tensor t = Tensor::empty(shape, dtype, ctx);
    testing::poison(t, ctx.stream());
    return t;
  }
  std::vector<double> values(const Tensor& t) { return testing::to_doubles(t, ctx.stream()); }

  Context ctx{Device::cpu()};
};

TEST_F(ConvCpu, AllPassesMatchTheReference) {
  for (const ConvCase& c : testing::conv_cases()) {
    for (DType dtype : {DType::f32, DType::f64}) {
      SCOPED_TRACE(c.name + ", " + std::string(dtype_name(dtype)));
      const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
      const Tensor x = random(c.x, dtype, 1), w = random(c.w, dtype, 2), dy = random(ys, dtype, 3);
      const testing::ConvReference ref = conv_reference(c, values(x), values(w), values(dy));
      const double tol = tolerance(dtype);

      const Tensor y = poisoned(ys, dtype);
      conv2d_forward(ctx, x, w, Tensor(), c.params, y);
      EXPECT_TRUE(testing::all_close(values(y), ref.y, tol, tol)) << "forward";

      const Tensor bias = random(Shape{c.w[0]}, dtype, 4), yb = poisoned(ys, dtype);
      conv2d_forward(ctx, x, w, bias, c.params, yb);
      EXPECT_TRUE(testing::all_close(values(yb), testing::plus_bias(ref.y, values(bias), ys), tol, tol))
          << "forward with bias";

      const Tensor dx = poisoned(c.x, dtype);
      testing::expect_conv_backward_matches(ctx, c, x, w, dy, dx, ref, tol);
    }
  }
}

TEST_F(ConvCpu, Float32RunsOnOneDnnInEveryCaseWhenBuiltWithIt) {
  if (!cpu_engine_info().dnnl) GTEST_SKIP() << "built without oneDNN (BATON_DNNL): the reference serves float32";
  for (const ConvCase& c : testing::conv_cases()) {
    const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
    const Tensor x = random(c.x, DType::f32, 1), w = random(c.w, DType::f32, 2), dy = random(ys, DType::f32, 3);
    conv2d_forward(ctx, x, w, Tensor(), c.params, poisoned(ys, DType::f32));
    conv2d_backward_data(ctx, dy, w, c.params, poisoned(c.x, DType::f32));
    conv2d_backward_filter(ctx, x, dy, c.params, random(c.w, DType::f32, 4));
  }
  const CpuEngineInfo after = cpu_engine_info();
  EXPECT_EQ(after.reference_fallbacks, 0) << "a case oneDNN has no implementation for";
  // One cached primitive per pass and geometry, the 15 geometries all different; an earlier test in
  // the same process may have created them already.
  EXPECT_GE(after.dnnl_calls, 3 * static_cast<int64_t>(testing::conv_cases().size()));
}

TEST_F(ConvCpu, FilterGradientAccumulatesOverCalls) {
  const ConvCase c = testing::conv_cases()[1];
  const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
  const Tensor x = random(c.x, DType::f64, 7), dy = random(ys, DType::f64, 8);
  Tensor dw = Tensor::empty(c.w, DType::f64, ctx);
  dw.fill(0.0, ctx.stream());
  conv2d_backward_filter(ctx, x, dy, c.params, dw);
  const std::vector<double> once = values(dw);
  conv2d_backward_filter(ctx, x, dy, c.params, dw);
  std::vector<double> twice = once;
  for (double& v : twice) v *= 2;
  EXPECT_TRUE(testing::all_close(values(dw), twice, 1e-12, 1e-12));
}

TEST_F(ConvCpu, EmptyBatchWritesNothingAndAddsNothing) {
  const Conv2dParams p{.padding = {1, 1}};
  const Tensor x = Tensor::empty(Shape{0, 3, 5, 5}, DType::f32, ctx), w = random(Shape{4, 3, 3, 3}, DType::f32, 9);
  const Tensor y = Tensor::empty(Shape{0, 4, 5, 5}, DType::f32, ctx);
  conv2d_forward(ctx, x, w, Tensor(), p, y);
  const Tensor dw = random(Shape{4, 3, 3, 3}, DType::f32, 10);
  const std::vector<double> before = values(dw);
  conv2d_backward_filter(ctx, x, y, p, dw);
  EXPECT_TRUE(testing::identical_values(values(dw), before));
}

TEST(Conv2dOutputShape, FollowsTheFormula) {
  EXPECT_EQ(conv2d_output_shape(Shape{32, 3, 224, 224}, Shape{64, 3, 7, 7}, {.stride = {2, 2}, .padding = {3, 3}}),
            (Shape{32, 64, 112, 112}));
  EXPECT_EQ(conv2d_output_shape(Shape{1, 4, 10, 9}, Shape{6, 2, 3, 2},
                                {.stride = {1, 2}, .padding = {0, 1}, .dilation = {2, 3}, .groups = 2}),
            (Shape{1, 6, 6, 4}));  // (10 - 5)/1 + 1, (9 + 2 - 4)/2 + 1
  EXPECT_EQ(conv2d_output_shape(Shape{2, 8, 7, 7}, Shape{4, 8, 1, 1}, {.stride = {2, 2}}), (Shape{2, 4, 4, 4}));
}

TEST(Conv2dOutputShape, RejectsBadShapesAndParameters) {
  const Shape x{2, 4, 8, 8}, w{6, 4, 3, 3};
  EXPECT_ERROR_MENTIONS("stride [0, 1] must be at least 1", conv2d_output_shape(x, w, {.stride = {0, 1}}));
  EXPECT_ERROR_MENTIONS("padding [-1, 0] must not be negative", conv2d_output_shape(x, w, {.padding = {-1, 0}}));
  EXPECT_ERROR_MENTIONS("dilation [1, 0] must be at least 1", conv2d_output_shape(x, w, {.dilation = {1, 0}}));
  EXPECT_ERROR_MENTIONS("groups 0 must be at least 1", conv2d_output_shape(x, w, {.groups = 0}));
  EXPECT_ERROR_MENTIONS("groups 3 does not divide the input's 4 channels",
                        conv2d_output_shape(x, Shape{6, 1, 3, 3}, {.groups = 3}));
  EXPECT_ERROR_MENTIONS("groups 4 does not divide the filter's 6 output channels",
                        conv2d_output_shape(x, Shape{6, 1, 3, 3}, {.groups = 4}));
  EXPECT_ERROR_MENTIONS("expected 2 channels in dimension 1", conv2d_output_shape(x, w, {.groups = 2}));
  EXPECT_ERROR_MENTIONS("expected 4 channels in dimension 1", conv2d_output_shape(x, Shape{6, 3, 3, 3}, {}));
  EXPECT_ERROR_MENTIONS("expected 4 dimensions [N, C, H, W]", conv2d_output_shape(Shape{4, 8, 8}, w, {}));
  EXPECT_ERROR_MENTIONS("expected 4 dimensions [K, C / groups, R, S]", conv2d_output_shape(x, Shape{6, 4, 3}, {}));
  EXPECT_ERROR_MENTIONS("height of the dilated kernel (5) exceeds the padded input's (4)",
                        conv2d_output_shape(Shape{1, 4, 4, 9}, w, {.dilation = {2, 1}}));
  EXPECT_ERROR_MENTIONS("width of the dilated kernel (9) exceeds the padded input's (8)",
                        conv2d_output_shape(x, Shape{6, 4, 1, 9}, {}));
}

TEST_F(ConvCpu, OpsRejectBadArguments) {
  const Conv2dParams p{.padding = {1, 1}};
  const Tensor x = random(Shape{2, 4, 8, 8}, DType::f32, 11), w = random(Shape{6, 4, 3, 3}, DType::f32, 12);
  const Tensor y = Tensor::empty(Shape{2, 6, 8, 8}, DType::f32, ctx);
  EXPECT_ERROR_MENTIONS("conv2d_forward: argument 'y' has shape [2, 6, 6, 6], expected [2, 6, 8, 8]",
                        conv2d_forward(ctx, x, w, Tensor(), p, Tensor::empty(Shape{2, 6, 6, 6}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("argument 'w' has dtype f64, expected f32",
                        conv2d_forward(ctx, x, random(Shape{6, 4, 3, 3}, DType::f64, 13), Tensor(), p, y));
  EXPECT_ERROR_MENTIONS("argument 'x' has dtype f16, expected one of f32, f64",
                        conv2d_forward(ctx, random(Shape{2, 4, 8, 8}, DType::f16, 14), w, Tensor(), p, y));
  EXPECT_ERROR_MENTIONS("argument 'bias' has shape [4], expected [6]",
                        conv2d_forward(ctx, x, w, random(Shape{4}, DType::f32, 15), p, y));
  EXPECT_ERROR_MENTIONS("conv2d_backward_data: argument 'dy' has shape",
                        conv2d_backward_data(ctx, Tensor::empty(Shape{2, 6, 7, 8}, DType::f32, ctx), w, p,
                                             Tensor::empty(Shape{2, 4, 8, 8}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("conv2d_backward_filter: filter has shape [6, 2, 3, 3], expected 4 channels",
                        conv2d_backward_filter(ctx, x, y, p, Tensor::empty(Shape{6, 2, 3, 3}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("argument 'db' has shape [5], expected [6]",
                        conv2d_backward_bias(ctx, y, Tensor::empty(Shape{5}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS(
      "conv2d_backward_bias: argument 'dy' has shape [2, 6], expected 4 dimensions",
      conv2d_backward_bias(ctx, Tensor::empty(Shape{2, 6}, DType::f32, ctx), Tensor::empty(Shape{6}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("argument 'x' is an undefined tensor", conv2d_forward(ctx, Tensor(), w, Tensor(), p, y));
}

TEST_F(ConvCpu, NoLibraryCallOnTheCpu) {
  const Tensor x = random(Shape{1, 2, 4, 4}, DType::f32, 16), w = random(Shape{3, 2, 3, 3}, DType::f32, 17);
  const Tensor y = Tensor::empty(Shape{1, 3, 2, 2}, DType::f32, ctx);
  EXPECT_FALSE(conv2d_library_call(ctx, Conv2dPass::forward, x, w, y, {}));
  EXPECT_FALSE(cached_conv2d_algorithm(ctx, Conv2dPass::forward, x.shape(), w.shape(), {}, DType::f32).has_value());
}

}  // namespace
}  // namespace baton::kernels
