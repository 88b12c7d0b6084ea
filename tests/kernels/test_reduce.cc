// Reductions on the CPU against float64 references computed here: every floating dtype, sizes 1, 7,
// 1023 and 4099, poisoned outputs, empty tensors, NaN, channel sums over several NCHW shapes, and
// argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/reduce.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::kFloatingDTypes;

constexpr int64_t kReduceSizes[] = {1, 7, 1023, 4099};

struct Expected {
  double sum = 0, mean = 0, max = -std::numeric_limits<double>::infinity(), sum_squares = 0, l2_norm = 0;
};

Expected reference(const std::vector<double>& v) {
  Expected e;
  for (double x : v) {
    e.sum += x;
    e.sum_squares += x * x;
    e.max = std::max(e.max, x);
  }
  e.mean = e.sum / static_cast<double>(v.size());
  e.l2_norm = std::sqrt(e.sum_squares);
  return e;
}

// out[c] = Σ x[n, c, i] (· y[n, c, i]) for an NCHW shape, i over H·W.
std::vector<double> channel_reference(const Shape& shape, const std::vector<double>& x, const std::vector<double>* y) {
  const int64_t batch = shape[0], channels = shape[1], hw = shape[2] * shape[3];
  std::vector<double> out(static_cast<size_t>(channels), 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < hw; ++i) {
        const auto at = static_cast<size_t>((b * channels + c) * hw + i);
        out[static_cast<size_t>(c)] += y == nullptr ? x[at] : x[at] * (*y)[at];
      }
    }
  }
  return out;
}

class ReduceCpu : public ::testing::Test {
 protected:
  // reduction(x) into a poisoned [] tensor of the reduction dtype, as a double.
  double run(Reduction reduction, const Tensor& x) {
    const Tensor out = testing::poisoned(Shape{}, reduction_dtype(x.dtype()), ctx.stream());
    reduce(ctx, x, reduction, out);
    return testing::to_doubles(out, ctx.stream()).at(0);
  }

  Context ctx{Device::cpu()};
};

TEST_F(ReduceCpu, ReductionDtype) {
  EXPECT_EQ(reduction_dtype(DType::f64), DType::f64);
  EXPECT_EQ(reduction_dtype(DType::f32), DType::f32);
  EXPECT_EQ(reduction_dtype(DType::f16), DType::f32);
  EXPECT_EQ(reduction_dtype(DType::bf16), DType::f32);
}

TEST_F(ReduceCpu, WholeTensorReductionsMatchTheReference) {
  for (DType dtype : kFloatingDTypes) {
    for (int64_t n : kReduceSizes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n));
      const std::vector<double> v = testing::random_values(n, dtype, 21);
      const Tensor x = testing::from_doubles(v, Shape{n}, dtype, ctx.stream());
      const Expected e = reference(v);
      // The CPU sums in double and rounds once to the result dtype.
      const double tol = testing::default_tolerance(reduction_dtype(dtype));
      EXPECT_TRUE(testing::all_close({run(Reduction::sum, x)}, {e.sum}, tol, tol)) << "sum";
      EXPECT_TRUE(testing::all_close({run(Reduction::mean, x)}, {e.mean}, tol, tol)) << "mean";
      EXPECT_TRUE(testing::all_close({run(Reduction::max, x)}, {e.max}, 0.0, 0.0)) << "max";
      EXPECT_TRUE(testing::all_close({run(Reduction::sum_squares, x)}, {e.sum_squares}, tol, tol)) << "sum_squares";
      EXPECT_TRUE(testing::all_close({run(Reduction::l2_norm, x)}, {e.l2_norm}, tol, tol)) << "l2_norm";
    }
  }
}

TEST_F(ReduceCpu, MaxFindsTheLargestElementAnywhere) {
  for (DType dtype : kFloatingDTypes) {
    for (int64_t n : kReduceSizes) {
      for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n) + ", at " + std::to_string(at));
        std::vector<double> v = testing::random_values(n, dtype, 27, -3.0, -1.0);
        v[static_cast<size_t>(at)] = -0.5;
        EXPECT_EQ(run(Reduction::max, testing::from_doubles(v, Shape{n}, dtype, ctx.stream())), -0.5);
      }
    }
  }
}

TEST_F(ReduceCpu, NamedFunctionsAndAnyShape) {
  const std::vector<double> v = testing::random_values(105, DType::f32, 22, -3.0, -1.0);  // all negative
  const Tensor x = testing::from_doubles(v, Shape{3, 5, 7}, DType::f32, ctx.stream());
  const Expected e = reference(v);
  const Tensor out = Tensor::empty(Shape{}, DType::f32, ctx);
  auto result = [&] { return testing::to_doubles(out, ctx.stream()).at(0); };
  sum(ctx, x, out);
  EXPECT_NEAR(result(), e.sum, 1e-4);
  mean(ctx, x, out);
  EXPECT_NEAR(result(), e.mean, 1e-6);
  max(ctx, x, out);
  EXPECT_EQ(result(), e.max);
  EXPECT_LT(result(), -1.0) << "max of negative values";
  sum_squares(ctx, x, out);
  EXPECT_NEAR(result(), e.sum_squares, 1e-3);
  l2_norm(ctx, x, out);
  EXPECT_NEAR(result(), e.l2_norm, 1e-5);
}

TEST_F(ReduceCpu, EmptyTensorsAndNaN) {
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor empty = Tensor::empty(Shape{0, 3}, dtype, ctx);
    EXPECT_EQ(run(Reduction::sum, empty), 0.0);
    EXPECT_EQ(run(Reduction::sum_squares, empty), 0.0);
    EXPECT_EQ(run(Reduction::l2_norm, empty), 0.0);
    const Tensor out = Tensor::empty(Shape{}, reduction_dtype(dtype), ctx);
    EXPECT_ERROR_MENTIONS("max: argument 'x' is empty", max(ctx, empty, out));
    EXPECT_ERROR_MENTIONS("mean: argument 'x' is empty", mean(ctx, empty, out));

    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Tensor with_nan = testing::from_doubles({1.0, nan, 3.0}, Shape{3}, dtype, ctx.stream());
    EXPECT_TRUE(std::isnan(run(Reduction::max, with_nan)));
    EXPECT_TRUE(std::isnan(run(Reduction::sum, with_nan)));
  }
}

TEST_F(ReduceCpu, ChannelSumAndDotMatchTheReference) {
  const Shape shapes[] = {Shape{2, 3, 4, 5},  Shape{1, 1, 1, 1}, Shape{5, 7, 1, 1}, Shape{3, 2, 9, 11},
                          Shape{33, 4, 2, 3}, Shape{0, 3, 2, 2}, Shape{4, 3, 0, 5}};
  for (DType dtype : kFloatingDTypes) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + ", shape " + shape.str());
      const std::vector<double> xv = testing::random_values(shape.numel(), dtype, 23);
      const std::vector<double> yv = testing::random_values(shape.numel(), dtype, 24);
      const Tensor x = testing::from_doubles(xv, shape, dtype, ctx.stream());
      const Tensor y = testing::from_doubles(yv, shape, dtype, ctx.stream());
      const DType out_dtype = reduction_dtype(dtype);
      const double tol = testing::default_tolerance(out_dtype);

      const Tensor out = Tensor::empty(Shape{shape[1]}, out_dtype, ctx);
      testing::poison(out, ctx.stream());
      channel_sum(ctx, x, out);
      EXPECT_TRUE(
          testing::all_close(testing::to_doubles(out, ctx.stream()), channel_reference(shape, xv, nullptr), tol, tol))
          << "channel_sum";
      testing::poison(out, ctx.stream());
      channel_dot(ctx, x, y, out);
      EXPECT_TRUE(
          testing::all_close(testing::to_doubles(out, ctx.stream()), channel_reference(shape, xv, &yv), tol, tol))
          << "channel_dot";
    }
  }
}

TEST_F(ReduceCpu, ArgumentErrorsNameTheArgument) {
  const Stream other = Stream::create(Device::cpu(1));
  const Tensor x = testing::random_tensor(Shape{2, 3, 4, 5}, DType::f16, ctx.stream(), 25);
  const Tensor scalar = Tensor::empty(Shape{}, DType::f32, ctx);
  const Tensor channels = Tensor::empty(Shape{3}, DType::f32, ctx);
  const Tensor none;

  EXPECT_ERROR_MENTIONS("sum: argument 'out' has shape [1], expected 0 dimensions",
                        sum(ctx, x, Tensor::empty(Shape{1}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("sum: argument 'out' has dtype f16, expected f32",
                        sum(ctx, x, Tensor::empty(Shape{}, DType::f16, ctx)));
  EXPECT_ERROR_MENTIONS("l2_norm: argument 'out' has dtype f32, expected f64",
                        l2_norm(ctx, testing::random_tensor(Shape{4}, DType::f64, ctx.stream(), 26), scalar));
  EXPECT_ERROR_MENTIONS("mean: argument 'x' has dtype i32",
                        mean(ctx, Tensor::empty(Shape{4}, DType::i32, ctx), scalar));
  EXPECT_ERROR_MENTIONS("max: argument 'x' is on cpu:1", max(ctx, Tensor::empty(Shape{4}, DType::f32, other), scalar));
  EXPECT_ERROR_MENTIONS("sum_squares: argument 'out' is on cpu:1",
                        sum_squares(ctx, x, Tensor::empty(Shape{}, DType::f32, other)));
  EXPECT_ERROR_MENTIONS("sum: argument 'x' is an undefined tensor", sum(ctx, none, scalar));
  EXPECT_ERROR_MENTIONS("sum: argument 'out' is an undefined tensor", sum(ctx, x, none));

  EXPECT_ERROR_MENTIONS("channel_sum: argument 'x' has shape [2, 3, 20], expected 4 dimensions",
                        channel_sum(ctx, x.reshape(Shape{2, 3, 20}), channels));
  EXPECT_ERROR_MENTIONS("channel_sum: argument 'out' has shape [4], expected [3]",
                        channel_sum(ctx, x, Tensor::empty(Shape{4}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("channel_sum: argument 'out' has shape [], expected [3]", channel_sum(ctx, x, scalar));
  EXPECT_ERROR_MENTIONS("channel_sum: argument 'out' has dtype f16, expected f32",
                        channel_sum(ctx, x, Tensor::empty(Shape{3}, DType::f16, ctx)));
  EXPECT_ERROR_MENTIONS("channel_dot: argument 'y' has shape [2, 3, 5, 4]",
                        channel_dot(ctx, x, Tensor::empty(Shape{2, 3, 5, 4}, DType::f16, ctx), channels));
  EXPECT_ERROR_MENTIONS("channel_dot: argument 'y' has dtype f32",
                        channel_dot(ctx, x, Tensor::empty(Shape{2, 3, 4, 5}, DType::f32, ctx), channels));
  EXPECT_ERROR_MENTIONS("channel_dot: argument 'y' is an undefined tensor", channel_dot(ctx, x, none, channels));
  EXPECT_ERROR_MENTIONS("channel_dot: argument 'y' is on cpu:1",
                        channel_dot(ctx, x, Tensor::empty(Shape{2, 3, 4, 5}, DType::f16, other), channels));
}

}  // namespace
}  // namespace baton::kernels
