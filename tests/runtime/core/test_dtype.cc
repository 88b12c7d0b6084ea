// DType names, sizes and parsing; binary16 / bfloat16 conversions against exhaustive checks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/philox.h"

namespace baton {
namespace {

TEST(DType, NamesSizesAndParsingRoundTrip) {
  const size_t sizes[] = {4, 8, 2, 2, 4, 8, 1};
  int i = 0;
  for (DType d : kAllDTypes) {
    EXPECT_EQ(parse_dtype(dtype_name(d)), d);
    EXPECT_EQ(dtype_size(d), sizes[i++]) << dtype_name(d);
  }
  EXPECT_TRUE(is_floating(DType::bf16));
  EXPECT_FALSE(is_floating(DType::i64));
}

TEST(DType, UnknownNameListsTheValidOnes) {
  try {
    parse_dtype("float32");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'float32'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos);
  }
}

TEST(Half, EveryNonNanHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const Half h{static_cast<uint16_t>(bits)};
    const float f = half_to_float(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f))));
      continue;
    }
    ASSERT_EQ(float_to_half(f).bits, h.bits) << "half bits 0x" << std::hex << bits;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(float_to_half(1.0f).bits, 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f).bits, 0xc000);
  EXPECT_EQ(float_to_half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f).bits, 0x7c00);    // ties to even: overflows to infinity
  EXPECT_EQ(float_to_half(0x1.0p-24f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(0x1.0p-25f).bits, 0x0000);  // tie to even: zero
  EXPECT_EQ(float_to_half(0x1.8p-25f).bits, 0x0001);
  EXPECT_FLOAT_EQ(half_to_float(Half{0x3555}), 0.333251953125f);
}

// Rounding to nearest, ties to even: compare with the two neighbouring halves of each input.
TEST(Half, RandomFloatsRoundToNearestEven) {
  for (uint64_t i = 0; i < 200000; ++i) {
    const uint32_t raw = philox::uint32_at(7, i);
    float f = std::bit_cast<float>(raw);
    if (!std::isfinite(f) || std::abs(f) > 65504.0f) continue;
    const Half h = float_to_half(f);
    const double got = half_to_float(h);
    const double lower = half_to_float(Half{static_cast<uint16_t>(h.bits - ((h.bits & 0x7fff) ? 1 : 0))});
    const double upper = half_to_float(Half{static_cast<uint16_t>(h.bits + 1)});
    const double err = std::abs(got - f);
    ASSERT_LE(err, std::abs(lower - f)) << f;
    if (std::isfinite(upper)) {
      ASSERT_LE(err, std::abs(upper - f)) << f;
    }
  }
}

TEST(BFloat16, RoundsToNearestEvenAndKeepsNan) {
  EXPECT_EQ(float_to_bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x3f808000u)).bits, 0x3f80);  // tie: even stays
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x3f818000u)).bits, 0x3f82);  // tie: odd rounds up
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x3f808001u)).bits, 0x3f81);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(std::nanf("")))));
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const float f = bfloat16_to_float(BFloat16{static_cast<uint16_t>(bits)});
    if (!std::isnan(f)) {
      ASSERT_EQ(float_to_bfloat16(f).bits, bits);
    }
  }
}

}  // namespace
}  // namespace baton
