// Philox 4x32-10 against the published known-answer vectors, and the derived distributions.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/core/philox.h"

namespace baton {
namespace {

TEST(Philox, MatchesKnownAnswerVectors) {
  // Known-answer tests of the Random123 reference (philox4x32, 10 rounds): counter, key, output.
  struct KnownAnswer {
    philox::Block counter;
    uint32_t key0, key1;
    philox::Block expected;
  };
  const KnownAnswer answers[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       0xffffffffu,
       0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
       0xa4093822u,
       0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const KnownAnswer& answer : answers) {
    const philox::Block out = philox::generate(answer.counter, answer.key0, answer.key1);
    for (size_t lane = 0; lane < 4; ++lane) EXPECT_EQ(out.v[lane], answer.expected.v[lane]) << "lane " << lane;
  }
}

TEST(Philox, ElementIndexingContinuesAcrossOffsets) {
  const philox::Block b = philox::block_at(42, 5);
  for (uint32_t lane = 0; lane < 4; ++lane) EXPECT_EQ(philox::uint32_at(42, 20 + lane), b.v[lane]);
  EXPECT_NE(philox::uint32_at(42, 0), philox::uint32_at(43, 0));
}

TEST(Philox, UniformAndNormalHaveTheRightMoments) {
  const int n = 1 << 18;
  double sum = 0, sum_sq = 0, nsum = 0, nsum_sq = 0;
  for (int i = 0; i < n; ++i) {
    const float u = philox::to_uniform_float(philox::uint32_at(1, static_cast<uint64_t>(i)));
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
    sum_sq += static_cast<double>(u) * u;
    const double z = philox::normal_at(1, static_cast<uint64_t>(i));
    ASSERT_TRUE(std::isfinite(z));
    nsum += z;
    nsum_sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(sum_sq / n - (sum / n) * (sum / n), 1.0 / 12.0, 0.002);
  EXPECT_NEAR(nsum / n, 0.0, 0.01);
  EXPECT_NEAR(nsum_sq / n, 1.0, 0.01);
}

}  // namespace
}  // namespace baton
