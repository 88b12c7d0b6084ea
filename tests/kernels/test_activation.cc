// Activation ops on the CPU against float64 references written here: every floating dtype, sizes 1,
// 7, 1023 and 4099, poisoned outputs, in-place use, special values (ReLU6's boundaries, huge sigmoid
// inputs, NaN), scale_by_scalar with f32 and f64 scalars, and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "tests/kernels/elementwise_test_support.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using elementwise_test::kInf;
using elementwise_test::kNaN;
using elementwise_test::kSizes;
using elementwise_test::Op;
using elementwise_test::Ref;
using testing::kFloatingDTypes;

double naive_relu6(double x) { return std::min(std::max(x, 0.0), 6.0); }
double naive_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Where the inputs a and b are drawn from.
struct Range {
  double low, high;
};

class ActivationCpu : public ::testing::Test {
 protected:
  Tensor tensor(const std::vector<double>& values, DType dtype) {
    return testing::from_doubles(values, Shape{static_cast<int64_t>(values.size())}, dtype, ctx.stream());
  }
  Tensor poisoned(int64_t n, DType dtype) {
    Tensor t = Tensor::empty(Shape{n}, dtype, ctx);
    testing::poison(t, ctx.stream());
    return t;
  }
  std::vector<double> values(const Tensor& t) { return testing::to_doubles(t, ctx.stream()); }

  // For each dtype and size: op(a, b) into a poisoned out, then in place into a; each against
  // ref(a[i], b[i]) with testing::default_tolerance of the dtype (0: bit for bit).
  void check(const Op& op, const Ref& ref, Range a_range, Range b_range, bool exact = false) {
    for (DType dtype : kFloatingDTypes) {
      for (int64_t n : kSizes) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n));
        const std::vector<double> av = testing::random_values(n, dtype, 11, a_range.low, a_range.high);
        const std::vector<double> bv = testing::random_values(n, dtype, 12, b_range.low, b_range.high);
        std::vector<double> expected(av.size());
        for (size_t i = 0; i < av.size(); ++i) expected[i] = ref(av[i], bv[i]);
        const double tol = exact ? 0.0 : testing::default_tolerance(dtype);

        const Tensor a = tensor(av, dtype), b = tensor(bv, dtype), out = poisoned(n, dtype);
        op(ctx, a, b, out);
        EXPECT_TRUE(testing::all_close(values(out), expected, tol, tol));
        EXPECT_EQ(values(a), av) << "an input changed";
        op(ctx, a, b, a);
        EXPECT_TRUE(testing::all_close(values(a), expected, tol, tol)) << "in place, out = a";
      }
    }
  }

  Context ctx{Device::cpu()};
};

TEST_F(ActivationCpu, Relu6ForwardIsExact) {
  check([](Context& c, const Tensor& x, const Tensor&, const Tensor& o) { relu6_forward(c, x, o); },
        [](double x, double) { return naive_relu6(x); }, {-3, 9}, {-1, 1}, true);
}

TEST_F(ActivationCpu, Relu6BackwardIsExact) {
  check([](Context& c, const Tensor& x, const Tensor& dy, const Tensor& dx) { relu6_backward(c, x, dy, dx); },
        [](double x, double dy) { return x > 0 && x < 6 ? dy : 0.0; }, {-3, 9}, {-1, 1}, true);
}

TEST_F(ActivationCpu, SigmoidForward) {
  check([](Context& c, const Tensor& x, const Tensor&, const Tensor& o) { sigmoid_forward(c, x, o); },
        [](double x, double) { return naive_sigmoid(x); }, {-12, 12}, {-1, 1});
}

TEST_F(ActivationCpu, SigmoidBackward) {
  check([](Context& c, const Tensor& y, const Tensor& dy, const Tensor& dx) { sigmoid_backward(c, y, dy, dx); },
        [](double y, double dy) { return dy * y * (1 - y); }, {0, 1}, {-2, 2});
}

TEST_F(ActivationCpu, TanhForward) {
  check([](Context& c, const Tensor& x, const Tensor&, const Tensor& o) { tanh_forward(c, x, o); },
        [](double x, double) { return std::tanh(x); }, {-4, 4}, {-1, 1});
}

TEST_F(ActivationCpu, TanhBackward) {
  check([](Context& c, const Tensor& y, const Tensor& dy, const Tensor& dx) { tanh_backward(c, y, dy, dx); },
        [](double y, double dy) { return dy * (1 - y * y); }, {-1, 1}, {-2, 2});
}

TEST_F(ActivationCpu, Relu6AtItsBoundariesAndSpecialValues) {
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = tensor({-1.0, -0.0, 0.0, 3.0, 6.0, 7.0, kNaN, kInf, -kInf}, dtype);
    const Tensor out = poisoned(9, dtype);
    relu6_forward(ctx, x, out);
    EXPECT_TRUE(testing::identical_values(values(out), {0.0, 0.0, 0.0, 3.0, 6.0, 6.0, kNaN, 6.0, 0.0}));
    // The gradient passes only strictly inside (0, 6): not at 0, not at 6 (PyTorch's hardtanh_backward).
    const Tensor dy = tensor(std::vector<double>(9, 1.5), dtype), dx = poisoned(9, dtype);
    relu6_backward(ctx, x, dy, dx);
    EXPECT_TRUE(testing::identical_values(values(dx), {0.0, 0.0, 0.0, 1.5, 0.0, 0.0, 0.0, 0.0, 0.0}));
  }
}

TEST_F(ActivationCpu, SigmoidAndTanhSaturateWithoutNaN) {
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = tensor({-1e4, -100.0, 100.0, 1e4, kInf, -kInf, 0.0, kNaN}, dtype);
    const Tensor s = poisoned(8, dtype), t = poisoned(8, dtype);
    sigmoid_forward(ctx, x, s);
    tanh_forward(ctx, x, t);
    const std::vector<double> sv = values(s), tv = values(t);
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(sv[i], i < 2 ? 0.0 : 1.0, 1e-30) << i;
    EXPECT_TRUE(testing::identical_values({sv[4], sv[5], sv[6]}, {1.0, 0.0, 0.5}));
    EXPECT_TRUE(testing::identical_values(tv, {-1.0, -1.0, 1.0, 1.0, 1.0, -1.0, 0.0, kNaN}));
    EXPECT_TRUE(std::isnan(sv[7]));
  }
}

TEST_F(ActivationCpu, ScaleByScalarWithF32AndF64Scalars) {
  for (DType dtype : kFloatingDTypes) {
    for (DType scalar_dtype : {DType::f32, DType::f64}) {
      for (const Shape& scalar_shape : {Shape{}, Shape{1}}) {
        for (int64_t n : kSizes) {
          SCOPED_TRACE(std::string(dtype_name(dtype)) + " by " + std::string(dtype_name(scalar_dtype)) + " " +
                       scalar_shape.str() + ", n = " + std::to_string(n));
          const std::vector<double> xv = testing::random_values(n, dtype, 13);
          const Tensor s = testing::from_doubles({-0.75}, scalar_shape, scalar_dtype, ctx.stream());
          std::vector<double> expected(xv.size());
          for (size_t i = 0; i < xv.size(); ++i) expected[i] = 2.5 * -0.75 * xv[i];
          const double tol = testing::default_tolerance(dtype);
          const Tensor x = tensor(xv, dtype), out = poisoned(n, dtype);
          scale_by_scalar(ctx, x, s, 2.5, out);
          EXPECT_TRUE(testing::all_close(values(out), expected, tol, tol));
          scale_by_scalar(ctx, x, s, x);  // in place, alpha = 1
          for (double& e : expected) e /= 2.5;
          EXPECT_TRUE(testing::all_close(values(x), expected, tol, tol)) << "in place";
        }
      }
    }
  }
}

TEST_F(ActivationCpu, ArgumentErrorsNameTheProblem) {
  const Tensor x = tensor({1, 2, 3}, DType::f32), y = tensor({1, 2, 3}, DType::f32);
  EXPECT_ERROR_MENTIONS("argument 'out' has shape [4], expected [3]", relu6_forward(ctx, x, poisoned(4, DType::f32)));
  EXPECT_ERROR_MENTIONS("argument 'dy' has dtype f64", sigmoid_backward(ctx, y, tensor({1, 2, 3}, DType::f64), x));
  EXPECT_ERROR_MENTIONS("argument 'x' has dtype i32",
                        tanh_forward(ctx, tensor({1, 2, 3}, DType::i32), tensor({1, 2, 3}, DType::i32)));
  EXPECT_ERROR_MENTIONS("argument 'y' is an undefined tensor", tanh_backward(ctx, Tensor(), y, x));
  const Tensor big = tensor({1, 2, 3, 4}, DType::f32);
  EXPECT_ERROR_MENTIONS("overlaps argument 'x' in part", relu6_forward(ctx, big.slice(0, 3), big.slice(1, 4)));

  const Tensor s = tensor({2}, DType::f32);
  EXPECT_ERROR_MENTIONS("argument 'scalar' has shape [2], expected [] or [1]",
                        scale_by_scalar(ctx, x, tensor({1, 2}, DType::f32), y));
  EXPECT_ERROR_MENTIONS("argument 'scalar' has dtype i64", scale_by_scalar(ctx, x, tensor({2}, DType::i64), y));
  EXPECT_ERROR_MENTIONS("argument 'scalar' is an undefined tensor", scale_by_scalar(ctx, x, Tensor(), y));
  EXPECT_ERROR_MENTIONS("argument 'alpha' is inf", scale_by_scalar(ctx, x, s, kInf, y));
  const Tensor one = tensor({2}, DType::f32);
  EXPECT_ERROR_MENTIONS("argument 'out' overlaps argument 'scalar'", scale_by_scalar(ctx, one, one, one));
}

}  // namespace
}  // namespace baton::kernels
