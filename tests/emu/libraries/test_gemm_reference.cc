// The reference GEMM loop against hand-computed cases: leading dimension larger than the rows, a
// transposed operand, alpha/beta blending, beta == 0 ignoring NaN, TF32 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gemm_reference.h"

namespace baton_emu {
namespace {

constexpr float kGemmNan = std::numeric_limits<float>::quiet_NaN();

// A = [[1, 2, 3], [4, 5, 6]] (2 x 3), B = [[1, 0], [0, 1], [1, 1]] (3 x 2): A * B = [[4, 5], [10, 11]].
const std::vector<float> kB = {1, 0, 1, 0, 1, 1};  // column-major, ldb = 3

TEST(GemmReference, LeadingDimensionLargerThanRowsSkipsThePadding) {
  // lda = 4 > m = 2: rows 2 and 3 of each stored column are padding, poisoned with NaN.
  const std::vector<float> a = {1, 4, kGemmNan, kGemmNan, 2, 5, kGemmNan, kGemmNan, 3, 6, kGemmNan, kGemmNan};
  std::vector<float> c = {1, 1, 1, 1};
  gemm_reference<float>({.m = 2, .n = 2, .k = 3, .lda = 4, .ldb = 3, .ldc = 2}, 2.0, a.data(), kB.data(), 0.5, c.data(),
                        false);
  // 2 * [[4, 5], [10, 11]] + 0.5, column-major.
  EXPECT_EQ(c, (std::vector<float>{8.5f, 20.5f, 10.5f, 22.5f}));
}

TEST(GemmReference, TransposedOperandReadsTheStoredMatrixAcross) {
  // A stored as A^T (3 x 2, lda = 3): column-major A^T is A row-major.
  const std::vector<float> a_transposed = {1, 2, 3, 4, 5, 6};
  // ldc = 3: row 2 is padding and must be left alone; beta = 0, so the NaN elsewhere is not read.
  std::vector<float> c = {kGemmNan, kGemmNan, -7, kGemmNan, kGemmNan, -7};
  gemm_reference<float>({.transpose_a = true, .m = 2, .n = 2, .k = 3, .lda = 3, .ldb = 3, .ldc = 3}, 1.0,
                        a_transposed.data(), kB.data(), 0.0, c.data(), false);
  EXPECT_EQ(c[0], 4);
  EXPECT_EQ(c[1], 10);
  EXPECT_EQ(c[2], -7);
  EXPECT_EQ(c[3], 5);
  EXPECT_EQ(c[4], 11);
  EXPECT_EQ(c[5], -7);
}

TEST(GemmReference, TransposedSecondOperandInDouble) {
  // B^T stored (2 x 3, ldb = 2): op(B) = B. A = [[1, 2, 3]] (1 x 3), A * B = [[4, 5]].
  const std::vector<double> a = {1, 2, 3};
  const std::vector<double> b_transposed = {1, 0, 0, 1, 1, 1};
  std::vector<double> c = {10, 20};
  gemm_reference<double>({.transpose_b = true, .m = 1, .n = 2, .k = 3, .lda = 1, .ldb = 2, .ldc = 1}, -1.0, a.data(),
                         b_transposed.data(), 1.0, c.data(), false);
  EXPECT_EQ(c, (std::vector<double>{6, 15}));
}

TEST(GemmReference, Tf32RoundsTheInputsMantissasToTenBits) {
  const float small = 1.0f + std::ldexp(1.0f, -12);  // below half a TF32 ulp above 1
  const float tie = 1.0f + std::ldexp(1.0f, -11);    // exactly half a TF32 ulp
  EXPECT_EQ(round_to_tf32(small), 1.0f);
  EXPECT_EQ(round_to_tf32(tie), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(round_to_tf32(-tie), -(1.0f + std::ldexp(1.0f, -10)));
  EXPECT_TRUE(std::isinf(round_to_tf32(std::numeric_limits<float>::infinity())));

  const float one = 1.0f;
  float fp32 = 0, tf32 = 0;
  gemm_reference<float>({.m = 1, .n = 1, .k = 1, .lda = 1, .ldb = 1, .ldc = 1}, 1.0, &small, &one, 0.0, &fp32, false);
  gemm_reference<float>({.m = 1, .n = 1, .k = 1, .lda = 1, .ldb = 1, .ldc = 1}, 1.0, &small, &one, 0.0, &tf32, true);
  EXPECT_EQ(fp32, small);
  EXPECT_EQ(tf32, 1.0f);
}

TEST(GemmReference, AccumulatesInDoubleAndRoundsOnce) {
  // 1e8 + 1 - 1e8 in float steps would give 0; accumulated in double it is 1.
  const std::vector<float> a = {1e8f, 1, -1e8f};
  const std::vector<float> b = {1, 1, 1};
  float c = kGemmNan;
  gemm_reference<float>({.m = 1, .n = 1, .k = 3, .lda = 1, .ldb = 3, .ldc = 1}, 1.0, a.data(), b.data(), 0.0, &c,
                        false);
  EXPECT_EQ(c, 1.0f);
}

}  // namespace
}  // namespace baton_emu
