// Random fills on CUDA against the CPU: 1, 7, 1023 and 2^20 + 3 elements at offsets that start
// anywhere in a Philox block, every dtype, aligned and unaligned outputs (vector and scalar
// stores), poisoned outputs. Uniform fills must be bit-identical; normal fills within one ulp of
// the output dtype for f32, f16 and bf16, and for f64 within a few double ulps of the terms of
// mean + stddev · z (host and device log / sin / cos differ in the last bits of a double, and the sum
// may cancel: on an H200, 0.5 + 2 · -0.2378 differed by 20 ulps of the result; philox.h explains the
// float case).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/random.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::bytes_of;
using testing::kFloatingDTypes;

constexpr int64_t kRandomSizes[] = {1, 7, 1023, (int64_t{1} << 20) + 3};
constexpr uint64_t kOffsets[] = {0, 1, 2, 3, 6, (uint64_t{1} << 40) + 1};

// The distance in ulps between two finite floating-point values of `size` bytes given as their
// sign-magnitude bit patterns: the difference of the magnitudes for equal signs, their sum across zero.
uint64_t ulp_distance(uint64_t a, uint64_t b, size_t size) {
  const uint64_t sign = uint64_t{1} << (8 * size - 1);
  const uint64_t magnitude_a = a & (sign - 1), magnitude_b = b & (sign - 1);
  if ((a & sign) != (b & sign)) return magnitude_a + magnitude_b;
  return magnitude_a > magnitude_b ? magnitude_a - magnitude_b : magnitude_b - magnitude_a;
}

// Elements that are not finite or whose values differ by more than `max_ulps`, with the first one.
::testing::AssertionResult within_ulps(const Tensor& actual, const Tensor& expected, const Stream& s,
                                       uint64_t max_ulps) {
  const std::vector<uint8_t> a = bytes_of(actual, s), e = bytes_of(expected, s);
  const std::vector<double> a_values = testing::to_doubles(actual, s), e_values = testing::to_doubles(expected, s);
  const size_t size = dtype_size(actual.dtype());
  int64_t failures = 0;
  size_t first = 0;
  for (size_t i = 0; i < a_values.size(); ++i) {
    uint64_t a_bits = 0, e_bits = 0;
    std::memcpy(&a_bits, a.data() + i * size, size);  // little-endian: the low `size` bytes
    std::memcpy(&e_bits, e.data() + i * size, size);
    const bool finite = std::isfinite(a_values[i]) && std::isfinite(e_values[i]);
    if (!finite || ulp_distance(a_bits, e_bits, size) > max_ulps) {
      if (failures++ == 0) first = i;
    }
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failures << " elements differ by more than " << max_ulps
                                       << " ulp(s) or are not finite; the first at " << first << ": " << a_values[first]
                                       << " vs " << e_values[first];
}

// f64 elements that are not finite or differ by more than max_ulps ulps of the larger term of
// mean + stddev · z, |mean| or |expected - mean|, with the first one.
::testing::AssertionResult within_term_ulps(const Tensor& actual, const Tensor& expected, const Stream& s, double mean,
                                            double max_ulps) {
  const std::vector<double> a = testing::to_doubles(actual, s), e = testing::to_doubles(expected, s);
  int64_t failures = 0;
  size_t first = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double term = std::max(std::abs(mean), std::abs(e[i] - mean));
    const double tolerance = max_ulps * std::numeric_limits<double>::epsilon() * term;
    if (!std::isfinite(a[i]) || !std::isfinite(e[i]) || std::abs(a[i] - e[i]) > tolerance) {
      if (failures++ == 0) first = i;
    }
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failures << " elements differ by more than " << max_ulps
                                       << " ulps of their larger term or are not finite; the first at " << first << ": "
                                       << a[first] << " vs " << e[first];
}

class RandomCuda : public testing::CudaOpTest {};

TEST_F(RandomCuda, MatchesCpu) {
  for (int64_t n : kRandomSizes) {
    for (uint64_t offset : kOffsets) {
      if (n > 1023 && offset != 0 && offset != 3) continue;  // the largest size at two offsets keeps it quick
      for (DType dtype : kFloatingDTypes) {
        for (bool unaligned : {false, true}) {
          SCOPED_TRACE(::testing::Message() << "n " << n << " offset " << offset << " " << dtype_name(dtype)
                                            << (unaligned ? " unaligned" : " aligned"));
          const uint64_t seed = 0x1234'5678'9abc'def0ull + static_cast<uint64_t>(n);
          Tensor expected = testing::poisoned(Shape{n}, dtype, cpu.stream());
          Tensor actual = testing::poisoned(Shape{n}, dtype, gs(), unaligned);
          uniform(cpu, expected, seed, offset, -3.0, 5.0);
          uniform(*gpu, actual, seed, offset, -3.0, 5.0);
          EXPECT_EQ(bytes_of(actual, gs()), bytes_of(expected, gs())) << "uniform";
          EXPECT_TRUE(testing::tensors_close(actual, expected, gs(), 0.0, 0.0)) << "uniform (values, NaN-aware)";

          testing::poison(actual, gs());
          normal(cpu, expected, seed, offset, 0.5, 2.0);
          normal(*gpu, actual, seed, offset, 0.5, 2.0);
          EXPECT_TRUE(dtype == DType::f64 ? within_term_ulps(actual, expected, gs(), 0.5, 16.0)
                                          : within_ulps(actual, expected, gs(), 1u))
              << "normal";
        }
      }
    }
  }
}

TEST_F(RandomCuda, SplitFillsEqualOneFill) {
  const int64_t n = 1023;  // odd: the second half starts inside a Philox block
  for (DType dtype : kFloatingDTypes) {
    Tensor whole = testing::poisoned(Shape{2 * n}, dtype, gs());
    Tensor halves = testing::poisoned(Shape{2 * n}, dtype, gs());
    normal(*gpu, whole, 42, 0);
    normal(*gpu, halves.slice(0, n), 42, 0);
    normal(*gpu, halves.slice(n, 2 * n), 42, static_cast<uint64_t>(n));
    EXPECT_EQ(bytes_of(halves, gs()), bytes_of(whole, gs())) << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace baton::kernels
