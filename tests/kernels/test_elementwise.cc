// Elementwise ops on the CPU against float64 references computed here: every floating dtype, sizes
// 1, 7, 1023 and 4099, poisoned outputs, in-place use, special values and argument errors (fill,
// copy and cast: test_elementwise_cast.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "tests/kernels/elementwise_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using elementwise_test::ElementwiseCpu;
using elementwise_test::kInf;
using elementwise_test::kNaN;
using elementwise_test::kSizes;
using testing::kFloatingDTypes;

TEST_F(ElementwiseCpu, Add) {
  check([](Context& c, const Tensor& a, const Tensor& b, const Tensor& o) { add(c, a, b, o); },
        [](double a, double b) { return a + b; });
}

TEST_F(ElementwiseCpu, Sub) {
  check([](Context& c, const Tensor& a, const Tensor& b, const Tensor& o) { sub(c, a, b, o); },
        [](double a, double b) { return a - b; });
}

TEST_F(ElementwiseCpu, Mul) {
  check([](Context& c, const Tensor& a, const Tensor& b, const Tensor& o) { mul(c, a, b, o); },
        [](double a, double b) { return a * b; });
}

TEST_F(ElementwiseCpu, Scale) {
  check([](Context& c, const Tensor& a, const Tensor&, const Tensor& o) { scale(c, a, -0.3, o); },
        [](double a, double) { return -0.3 * a; });
}

TEST_F(ElementwiseCpu, Axpby) {
  check([](Context& c, const Tensor& a, const Tensor& b, const Tensor& o) { axpby(c, 0.75, a, -1.5, b, o); },
        [](double a, double b) { return 0.75 * a - 1.5 * b; });
}

TEST_F(ElementwiseCpu, ReluForwardIsExact) {
  check([](Context& c, const Tensor& a, const Tensor&, const Tensor& o) { relu_forward(c, a, o); },
        [](double a, double) { return a > 0 ? a : 0.0; }, 0.0);
}

TEST_F(ElementwiseCpu, ReluBackwardIsExact) {
  check([](Context& c, const Tensor& y, const Tensor& dy, const Tensor& dx) { relu_backward(c, y, dy, dx); },
        [](double y, double dy) { return y > 0 ? dy : 0.0; }, 0.0);
}

TEST_F(ElementwiseCpu, AxpyUpdatesY) {
  for (DType dtype : kFloatingDTypes) {
    for (int64_t n : kSizes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n));
      const std::vector<double> xv = testing::random_values(n, dtype, 3), yv = testing::random_values(n, dtype, 4);
      std::vector<double> expected(xv.size()), doubled(xv.size());
      for (size_t i = 0; i < xv.size(); ++i) {
        expected[i] = -2.5 * xv[i] + yv[i];
        doubled[i] = 1.5 * yv[i];
      }
      const double tol = testing::default_tolerance(dtype);
      const Tensor x = tensor(xv, dtype), y = tensor(yv, dtype);
      axpy(ctx, -2.5, x, y);
      EXPECT_TRUE(testing::all_close(values(y), expected, tol, tol));
      EXPECT_EQ(values(x), xv);
      const Tensor same = tensor(yv, dtype);
      axpy(ctx, 0.5, same, same);  // x is y: y = 1.5·y
      EXPECT_TRUE(testing::all_close(values(same), doubled, tol, tol)) << "x is y";
    }
  }
}

TEST_F(ElementwiseCpu, ReluSpecialValues) {
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = tensor({-0.0, kNaN, kInf, -kInf, 2.0, -2.0, 0.0}, dtype), out = poisoned(Shape{7}, dtype);
    relu_forward(ctx, x, out);
    const std::vector<double> y = values(out);
    EXPECT_TRUE(testing::identical_values(y, {0.0, kNaN, kInf, 0.0, 2.0, 0.0, 0.0}));  // relu(-0) is +0

    const Tensor yt = tensor({0.0, -0.0, 1.0, -1.0, kNaN, kInf}, dtype);
    const Tensor dy = tensor({5.0, 5.0, 5.0, 5.0, 5.0, -3.0}, dtype), dx = poisoned(Shape{6}, dtype);
    relu_backward(ctx, yt, dy, dx);
    EXPECT_TRUE(testing::identical_values(values(dx), {0.0, 0.0, 5.0, 0.0, 0.0, -3.0}));
  }
}

TEST_F(ElementwiseCpu, ShapesOtherThanVectors) {
  const std::vector<double> av = testing::random_values(24, DType::f32, 5),
                            bv = testing::random_values(24, DType::f32, 6);
  const Tensor a = testing::from_doubles(av, Shape{2, 3, 4}, DType::f32, ctx.stream());
  const Tensor b = testing::from_doubles(bv, Shape{2, 3, 4}, DType::f32, ctx.stream());
  const Tensor out = poisoned(Shape{2, 3, 4}, DType::f32);
  mul(ctx, a, b, out);
  std::vector<double> expected(av.size());
  for (size_t i = 0; i < av.size(); ++i) expected[i] = av[i] * bv[i];
  EXPECT_TRUE(testing::all_close(values(out), expected, 1e-6, 1e-6));
  // A view along dimension 0 is an ordinary output.
  const Tensor big = poisoned(Shape{4, 3, 4}, DType::f32);
  add(ctx, a, b, big.slice(1, 3));
  const std::vector<double> got = values(big);
  for (size_t i = 0; i < av.size(); ++i) EXPECT_NEAR(got[12 + i], av[i] + bv[i], 1e-6) << i;
  for (size_t i : {size_t{0}, size_t{11}, size_t{36}, size_t{47}})
    EXPECT_TRUE(std::isnan(got[i])) << "row outside the view written";
}

TEST_F(ElementwiseCpu, ArgumentErrorsNameTheArgument) {
  const Stream other = Stream::create(Device::cpu(1));
  const Tensor a = testing::random_tensor(Shape{4}, DType::f32, ctx.stream(), 9);
  const Tensor b = testing::random_tensor(Shape{4}, DType::f32, ctx.stream(), 10);
  const Tensor out = Tensor::empty(Shape{4}, DType::f32, ctx);
  const Tensor longer = Tensor::empty(Shape{5}, DType::f32, ctx);
  const Tensor wide = Tensor::empty(Shape{4}, DType::f64, ctx);
  const Tensor half = Tensor::empty(Shape{4}, DType::f16, ctx);
  const Tensor elsewhere = Tensor::empty(Shape{4}, DType::f32, other);
  const Tensor ints = Tensor::empty(Shape{4}, DType::i32, ctx);
  const Tensor none;

  EXPECT_ERROR_MENTIONS("add: argument 'b' has shape [5]", add(ctx, a, longer, out));
  EXPECT_ERROR_MENTIONS("add: argument 'out' has shape [5]", add(ctx, a, b, longer));
  EXPECT_ERROR_MENTIONS("sub: argument 'b' has dtype f64", sub(ctx, a, wide, out));
  EXPECT_ERROR_MENTIONS("mul: argument 'out' has dtype f16", mul(ctx, a, b, half));
  EXPECT_ERROR_MENTIONS("add: argument 'a' is on cpu:1", add(ctx, elsewhere, b, out));
  EXPECT_ERROR_MENTIONS("add: argument 'out' is on cpu:1", add(ctx, a, b, elsewhere));
  EXPECT_ERROR_MENTIONS("mul: argument 'b' is an undefined tensor", mul(ctx, a, none, out));
  EXPECT_ERROR_MENTIONS("add: argument 'a' has dtype i32", add(ctx, ints, ints, ints));
  EXPECT_ERROR_MENTIONS("scale: argument 'out' has shape [5]", scale(ctx, a, 2.0, longer));
  EXPECT_ERROR_MENTIONS("scale: argument 'x' is an undefined tensor", scale(ctx, none, 2.0, out));
  EXPECT_ERROR_MENTIONS("axpy: argument 'y' has dtype f64", axpy(ctx, 2.0, a, wide));
  EXPECT_ERROR_MENTIONS("axpy: argument 'x' is on cpu:1", axpy(ctx, 2.0, elsewhere, b));
  EXPECT_ERROR_MENTIONS("axpby: argument 'y' has shape [5]", axpby(ctx, 1.0, a, 2.0, longer, out));
  EXPECT_ERROR_MENTIONS("axpby: argument 'out' has dtype f16", axpby(ctx, 1.0, a, 2.0, b, half));
  EXPECT_ERROR_MENTIONS("relu_forward: argument 'out' is on cpu:1", relu_forward(ctx, a, elsewhere));
  EXPECT_ERROR_MENTIONS("relu_forward: argument 'x' has dtype i32", relu_forward(ctx, ints, ints));
  EXPECT_ERROR_MENTIONS("relu_backward: argument 'dy' has shape [5]", relu_backward(ctx, a, longer, out));
  EXPECT_ERROR_MENTIONS("relu_backward: argument 'dx' has dtype f64", relu_backward(ctx, a, b, wide));
  EXPECT_ERROR_MENTIONS("fill: argument 'out' is an undefined tensor", fill(ctx, none, 1.0));
  EXPECT_ERROR_MENTIONS("fill: argument 'out' is on cpu:1", fill(ctx, elsewhere, 1.0));
  EXPECT_ERROR_MENTIONS("copy: argument 'out' has shape [5]", copy(ctx, a, longer));
  EXPECT_ERROR_MENTIONS("copy: argument 'out' has dtype f64", copy(ctx, a, wide));
  EXPECT_ERROR_MENTIONS("copy: argument 'src' is on cpu:1", copy(ctx, elsewhere, out));
  EXPECT_ERROR_MENTIONS("cast: argument 'out' has shape [5]", cast(ctx, a, longer));
  EXPECT_ERROR_MENTIONS("cast: argument 'src' has dtype i32", cast(ctx, ints, out));
  EXPECT_ERROR_MENTIONS("cast: argument 'out' has dtype i32", cast(ctx, a, ints));
  EXPECT_ERROR_MENTIONS("cast: argument 'src' is an undefined tensor", cast(ctx, none, out));
}

TEST_F(ElementwiseCpu, OutputsMayAliasAnInputOnlyExactly) {
  const Tensor t = testing::random_tensor(Shape{8}, DType::f32, ctx.stream(), 11);
  const std::vector<double> before = values(t);
  const Tensor head = t.slice(0, 7), tail = t.slice(1, 8);
  EXPECT_ERROR_MENTIONS("add: argument 'out' overlaps argument 'a'", add(ctx, head, head, tail));
  EXPECT_ERROR_MENTIONS("relu_backward: argument 'dx' overlaps argument 'dy'", relu_backward(ctx, head, tail, head));
  EXPECT_ERROR_MENTIONS("copy: argument 'out' overlaps argument 'src'", copy(ctx, head, tail));
  EXPECT_EQ(values(t), before) << "a rejected call wrote";
  // Disjoint views of one storage are fine.
  const Tensor low = t.slice(0, 4), high = t.slice(4, 8);
  add(ctx, low, low, high);
  const std::vector<double> after = values(t);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(after[4 + i], 2 * before[i], 1e-6);
}

}  // namespace
}  // namespace baton::kernels
