// Random fills on the CPU: the numbers are Philox's at stream index offset + i, with the right
// moments, deterministic, continuing across offsets; and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/random.h"
#include "runtime/core/philox.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::bytes_of;
using testing::kFloatingDTypes;

TEST(RandomFill, UniformIsPhiloxAtOffsetPlusIndex) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const int64_t n = 1001;
  const uint64_t seed = 7, offset = 3;
  Tensor out32 = Tensor::empty(Shape{n}, DType::f32, ctx);
  Tensor out64 = Tensor::empty(Shape{n}, DType::f64, ctx);
  testing::poison(out32, s);
  testing::poison(out64, s);
  uniform(ctx, out32, seed, offset);
  uniform(ctx, out64, seed, offset);
  const std::vector<float> u32 = out32.to_vector<float>(s);
  const std::vector<double> u64 = out64.to_vector<double>(s);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t bits = philox::uint32_at(seed, offset + static_cast<uint64_t>(i));
    ASSERT_EQ(u32[i], philox::to_uniform_float(bits)) << i;   // 24 bits for f32
    ASSERT_EQ(u64[i], philox::to_uniform_double(bits)) << i;  // 32 bits for f64
  }

  // A range: low + (high - low) * u, rounded to the dtype.
  uniform(ctx, out32, seed, offset, -2.0, 3.0);
  std::vector<double> expected(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    expected[i] = -2.0 + 5.0 * philox::to_uniform_float(philox::uint32_at(seed, offset + static_cast<uint64_t>(i)));
  }
  EXPECT_TRUE(testing::all_close(testing::to_doubles(out32, s), expected, 1e-7, 1e-7));
}

TEST(RandomFill, NormalIsPhiloxNormalAtOffsetPlusIndex) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const int64_t n = 1001;
  const uint64_t seed = 9, offset = 5;
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor out = Tensor::empty(Shape{n}, dtype, ctx);
    testing::poison(out, s);
    normal(ctx, out, seed, offset, 1.5, 0.25);
    std::vector<double> expected(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      expected[i] = 1.5 + 0.25 * philox::normal_at(seed, offset + static_cast<uint64_t>(i));
    const double tol = dtype == DType::f64 ? 1e-15 : 1e-7;
    EXPECT_TRUE(testing::all_close(testing::to_doubles(out, s), expected, tol, tol)) << dtype_name(dtype);
  }
}

TEST(RandomFill, MomentsAndRangeForEachDtype) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const int64_t n = 1 << 18;
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor out = Tensor::empty(Shape{n}, dtype, ctx);
    testing::poison(out, s);
    uniform(ctx, out, 123, 0, -1.0, 3.0);
    double sum = 0, sum_sq = 0;
    for (double v : testing::to_doubles(out, s)) {
      ASSERT_GE(v, -1.0);
      ASSERT_LE(v, 3.0);  // rounding to a 16-bit dtype can reach high itself
      sum += v;
      sum_sq += v * v;
    }
    EXPECT_NEAR(sum / n, 1.0, 0.02);
    EXPECT_NEAR(sum_sq / n - (sum / n) * (sum / n), 16.0 / 12.0, 0.02);

    testing::poison(out, s);
    normal(ctx, out, 321, 0, 2.0, 0.5);
    sum = sum_sq = 0;
    for (double v : testing::to_doubles(out, s)) {
      ASSERT_TRUE(std::isfinite(v));
      sum += v;
      sum_sq += v * v;
    }
    EXPECT_NEAR(sum / n, 2.0, 0.01);
    EXPECT_NEAR(sum_sq / n - (sum / n) * (sum / n), 0.25, 0.01);
  }
}

TEST(RandomFill, IsDeterministicAndDependsOnTheSeed) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  for (DType dtype : kFloatingDTypes) {
    Tensor a = Tensor::empty(Shape{17, 3}, dtype, ctx), b = Tensor::empty(Shape{17, 3}, dtype, ctx);
    normal(ctx, a, 5, 11);
    normal(ctx, b, 5, 11);
    EXPECT_EQ(bytes_of(a, s), bytes_of(b, s)) << dtype_name(dtype);
    normal(ctx, b, 6, 11);
    EXPECT_NE(bytes_of(a, s), bytes_of(b, s)) << dtype_name(dtype);
    uniform(ctx, a, 5, 11);
    uniform(ctx, b, 5, 11);
    EXPECT_EQ(bytes_of(a, s), bytes_of(b, s)) << dtype_name(dtype);
    uniform(ctx, b, 5, 12);
    EXPECT_NE(bytes_of(a, s), bytes_of(b, s)) << dtype_name(dtype);
  }
}

TEST(RandomFill, ConsecutiveOffsetsContinueTheSequence) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  for (DType dtype : kFloatingDTypes) {
    for (int64_t n : {1, 7, 1001}) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " n " << n);
      Tensor whole = Tensor::empty(Shape{2 * n}, dtype, ctx), halves = Tensor::empty(Shape{2 * n}, dtype, ctx);
      testing::poison(halves, s);
      uniform(ctx, whole, 77, 0);
      uniform(ctx, halves.slice(0, n), 77, 0);
      uniform(ctx, halves.slice(n, 2 * n), 77, static_cast<uint64_t>(n));
      EXPECT_EQ(bytes_of(halves, s), bytes_of(whole, s));
      testing::poison(halves, s);
      normal(ctx, whole, 77, 0);
      normal(ctx, halves.slice(0, n), 77, 0);
      normal(ctx, halves.slice(n, 2 * n), 77, static_cast<uint64_t>(n));
      EXPECT_EQ(bytes_of(halves, s), bytes_of(whole, s));
    }
  }
}

TEST(RandomFill, FillsUpToTheLastStreamIndex) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const int64_t n = 6;
  const uint64_t offset = std::numeric_limits<uint64_t>::max() - (n - 1);  // the last element is index 2^64 - 1
  Tensor out = Tensor::empty(Shape{n}, DType::f64, ctx);
  testing::poison(out, s);
  uniform(ctx, out, 3, offset);
  const std::vector<double> u = out.to_vector<double>(s);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(u[i], philox::to_uniform_double(philox::uint32_at(3, offset + static_cast<uint64_t>(i)))) << i;
  }
  EXPECT_ERROR_MENTIONS("'offset'", uniform(ctx, out, 3, offset + 1));
}

TEST(RandomFill, BadInputNamesTheArgument) {
  Context ctx(Device::cpu());
  Tensor out = Tensor::empty(Shape{4}, DType::f32, ctx);
  EXPECT_ERROR_MENTIONS("'out'", uniform(ctx, Tensor::empty(Shape{4}, DType::i32, ctx), 1, 0));
  EXPECT_ERROR_MENTIONS("'out'", normal(ctx, Tensor(), 1, 0));
  EXPECT_ERROR_MENTIONS("'high'", uniform(ctx, out, 1, 0, 2.0, 1.0));
  EXPECT_ERROR_MENTIONS("'low'", uniform(ctx, out, 1, 0, NAN, 1.0));
  EXPECT_ERROR_MENTIONS("'low' and 'high'", uniform(ctx, out, 1, 0, -1e308, 1e308));
  EXPECT_ERROR_MENTIONS("'stddev'", normal(ctx, out, 1, 0, 0.0, -1.0));
  EXPECT_ERROR_MENTIONS("'mean'", normal(ctx, out, 1, 0, INFINITY, 1.0));
}

}  // namespace
}  // namespace baton::kernels
