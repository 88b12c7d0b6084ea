// FastDivisor (kernels/cuda/index_divisor.h), the 32-bit division of the memory-bound CUDA kernels,
// against the division operator: every divisor up to 4096 and divisors near powers of two up to
// 2^31 - 1, with dividends at 0, around multiples of the divisor, and just below 2^31.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cuda/index_divisor.h"

namespace baton::kernels::cuda {
namespace {

constexpr int64_t kLast = FastDivisor::kLimit - 1;  // the largest index the fast path sees

std::vector<int64_t> dividends_for(int64_t d, std::mt19937_64& rng) {
  std::vector<int64_t> out = {0, 1, kLast, kLast - 1, kLast - d, (kLast / d) * d, (kLast / d) * d - 1};
  for (int64_t m : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{1000}, kLast / d}) {
    for (int64_t delta : {-1, 0, 1}) {
      const int64_t n = m * d + delta;
      if (n >= 0 && n <= kLast) out.push_back(n);
    }
  }
  std::uniform_int_distribution<int64_t> any(0, kLast);
  for (int k = 0; k < 64; ++k) out.push_back(any(rng));
  return out;
}

void expect_exact(int64_t d, std::mt19937_64& rng) {
  const FastDivisor fast(d);
  const WideDivisor wide(d);
  for (int64_t n : dividends_for(d, rng)) {
    ASSERT_EQ(fast.div(n), n / d) << n << " / " << d;
    ASSERT_EQ(wide.div(n), n / d) << n << " / " << d;
  }
}

TEST(IndexDivisor, SmallDivisorsAreExact) {
  std::mt19937_64 rng(1);
  for (int64_t d = 1; d <= 4096; ++d) expect_exact(d, rng);
}

TEST(IndexDivisor, DivisorsNearPowersOfTwoAreExact) {
  std::mt19937_64 rng(2);
  for (int shift = 12; shift <= 31; ++shift) {
    const int64_t power = int64_t{1} << shift;
    for (int64_t delta : {-3, -1, 0, 1, 3}) {
      const int64_t d = power + delta;
      if (d >= 1 && d <= kLast) expect_exact(d, rng);
    }
  }
  std::uniform_int_distribution<int64_t> any(1, kLast);
  for (int k = 0; k < 2000; ++k) expect_exact(any(rng), rng);
}

TEST(IndexDivisor, ChannelOfMatchesTheDefinition) {
  // [outer, channels, inner] with outer·channels·inner just below 2^31 (the fast path's largest).
  const int64_t channels = 37, inner = 1021, outer = kLast / (channels * inner);
  const ChannelOf<FastDivisor> fast(inner, channels);
  const ChannelOf<WideDivisor> wide(inner, channels);
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> any(0, outer * channels * inner - 1);
  for (int k = 0; k < 100000; ++k) {
    const int64_t i = any(rng);
    ASSERT_EQ(fast(i), (i / inner) % channels) << i;
    ASSERT_EQ(wide(i), (i / inner) % channels) << i;
  }
  const int64_t last = outer * channels * inner - 1;
  EXPECT_EQ(fast(last), channels - 1);
}

}  // namespace
}  // namespace baton::kernels::cuda
