// Fill, copy and cast on the CPU: every dtype, sizes 1, 7, 1023 and 4099, views, and casts that
// round once to nearest even (against a reference found by comparing neighbours).
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
using testing::kFloatingDTypes;

// The sizes of the elementwise tests, and the special values casts must keep.
using elementwise_test::kInf;
using elementwise_test::kNaN;
using elementwise_test::kSizes;

// v rounded to nearest even in dtype (one rounding), found by comparing neighbours: independent of
// the kernels' round-to-odd path.
double round_to(double v, DType dtype) {
  if (dtype == DType::f64 || !std::isfinite(v)) return v;
  if (dtype == DType::f32) return static_cast<float>(v);
  const bool half = dtype == DType::f16;
  // Round to nearest even overflows at the largest finite value plus half its spacing.
  const double overflow = half ? 65520.0 : std::ldexp(2.0 - std::ldexp(1.0, -8), 127);
  if (std::fabs(v) >= overflow) return std::copysign(kInf, v);
  auto value = [half](uint16_t bits) -> double {
    return half ? half_to_float(Half{bits}) : bfloat16_to_float(BFloat16{bits});
  };
  const float f = static_cast<float>(v);
  const uint16_t guess = half ? float_to_half(f).bits : float_to_bfloat16(f).bits;  // within one step
  uint16_t best = guess;
  for (int step : {-1, 1}) {
    const auto candidate = static_cast<uint16_t>(guess + step);
    if (std::isnan(value(candidate))) continue;
    const double error = std::fabs(value(candidate) - v), best_error = std::fabs(value(best) - v);
    if (error < best_error || (error == best_error && (candidate & 1u) == 0)) best = candidate;
  }
  return value(best);
}

TEST_F(ElementwiseCpu, FillWritesEveryElementOfAnyDtype) {
  for (DType dtype : kAllDTypes) {
    for (int64_t n : kSizes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n));
      const Tensor t = poisoned(Shape{n}, dtype);
      fill(ctx, t, 3.0);
      EXPECT_EQ(values(t), std::vector<double>(n, 3.0));
    }
  }
  const Tensor t = poisoned(Shape{6, 2}, DType::bf16);
  fill(ctx, t, 1.0);
  fill(ctx, t.slice(2, 4), -1.5);
  EXPECT_EQ(values(t), (std::vector<double>{1, 1, 1, 1, -1.5, -1.5, -1.5, -1.5, 1, 1, 1, 1}));
}

TEST_F(ElementwiseCpu, CopyAnyDtypeIntoTensorsAndViews) {
  for (DType dtype : kAllDTypes) {
    for (int64_t n : kSizes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n));
      const std::vector<double> sv = testing::random_values(n, dtype, 7, dtype == DType::u8 ? 0.0 : -100.0, 100.0);
      const Tensor src = tensor(sv, dtype), out = poisoned(Shape{n}, dtype);
      copy(ctx, src, out);
      EXPECT_EQ(values(out), sv);
      copy(ctx, src, src);  // in place: nothing changes
      EXPECT_EQ(values(src), sv);

      const Tensor big = poisoned(Shape{n + 2}, dtype);
      const std::vector<double> before = values(big);
      copy(ctx, src, big.slice(1, n + 1));
      const std::vector<double> got = values(big);
      EXPECT_EQ(std::vector<double>(got.begin() + 1, got.end() - 1), sv);
      for (size_t i : {size_t{0}, got.size() - 1}) {
        EXPECT_TRUE(std::isnan(got[i]) || got[i] == before[i]) << "element " << i << " outside the view written";
      }
    }
  }
}

TEST_F(ElementwiseCpu, CastRoundsOnceToNearestEvenForEveryPair) {
  for (DType from : kFloatingDTypes) {
    for (DType to : kFloatingDTypes) {
      for (int64_t n : kSizes) {
        SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)) +
                     ", n = " + std::to_string(n));
        // Magnitudes from 2^-30 to 2^20: f16 subnormals, underflow and overflow are all reached.
        std::vector<double> raw = testing::random_values(n, DType::f64, 8);
        for (size_t i = 0; i < raw.size(); ++i) raw[i] = std::ldexp(raw[i], static_cast<int>(i % 51) - 30);
        const Tensor src = tensor(raw, from);
        const std::vector<double> sv = values(src);
        std::vector<double> expected(sv.size());
        for (size_t i = 0; i < sv.size(); ++i) expected[i] = round_to(sv[i], to);
        const Tensor out = poisoned(Shape{n}, to);
        cast(ctx, src, out);
        EXPECT_TRUE(testing::identical_values(values(out), expected));
      }
    }
  }
}

// f64 values where rounding through f32 first (double rounding) gives the wrong f16 or bf16.
struct CastCase {
  double value, f32, f16, bf16;
};
const CastCase kCastCases[] = {
    // Just above an f16 midpoint: f32 drops the 2^-40 and lands on the midpoint, which ties to even.
    {1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-11, 1 + 0x1p-10, 1.0},
    {-(1 + 0x1p-11 + 0x1p-40), -(1 + 0x1p-11), -(1 + 0x1p-10), -1.0},
    {1 + 0x1p-8 + 0x1p-40, 1 + 0x1p-8, 1 + 0x1p-8, 1 + 0x1p-7},  // the same for bf16
    {1 + 0x1p-11, 1 + 0x1p-11, 1.0, 1.0},                        // an exact tie: to even
    {1 + 3 * 0x1p-11, 1 + 3 * 0x1p-11, 1 + 0x1p-9, 1.0},         // a tie whose even neighbour is above
    {0x1p-25 + 0x1p-54, 0x1p-25, 0x1p-24, 0x1p-25},              // just above half the smallest f16 subnormal
    {0x1p-14 - 0x1p-25 - 0x1p-60, 0x1p-14 - 0x1p-25, 0x1p-14 - 0x1p-24, 0x1p-14},  // just below a subnormal midpoint
    {65519.0, 65519.0, 65504.0, 65536.0},
    {65520.0, 65520.0, kInf, 65536.0},
    {-70000.0, -70000.0, -kInf, -70144.0},
    {1e300, kInf, kInf, kInf},
    {-1e-300, -0.0, -0.0, -0.0},
    {kInf, kInf, kInf, kInf},
    {-0.0, -0.0, -0.0, -0.0},
    {kNaN, kNaN, kNaN, kNaN},
};

TEST_F(ElementwiseCpu, CastFromF64RoundsOnce) {
  std::vector<double> input;
  for (const CastCase& c : kCastCases) input.push_back(c.value);
  const Tensor src = tensor(input, DType::f64);
  for (DType to : {DType::f32, DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(to));
    const Tensor out = poisoned(Shape{static_cast<int64_t>(input.size())}, to);
    cast(ctx, src, out);
    const std::vector<double> got = values(out);
    for (size_t i = 0; i < input.size(); ++i) {
      const CastCase& c = kCastCases[i];
      const double expected = to == DType::f32 ? c.f32 : (to == DType::f16 ? c.f16 : c.bf16);
      EXPECT_TRUE(testing::identical_values({got[i]}, {expected})) << "case " << i << " (" << c.value << ")";
      EXPECT_TRUE(testing::identical_values({round_to(c.value, to)}, {expected})) << "round_to disagrees, case " << i;
    }
  }
}

}  // namespace
}  // namespace baton::kernels
