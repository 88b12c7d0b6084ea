// The reference convolution loops against hand-computed cases: a 1-channel 3x3 input with padding and
// stride (cross-correlation and convolution), its backward data and filter, a grouped and a dilated case.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "conv_reference.h"

namespace baton_emu {
namespace {

constexpr double kConvNan = std::numeric_limits<double>::quiet_NaN();

// x = [[1, 2, 3], [4, 5, 6], [7, 8, 9]], w = [[0, 1, 0], [1, -1, 0], [0, 0, 2]], pad 1, stride 2:
// a 2 x 2 output whose windows start at rows/columns -1 and 1.
const std::vector<double> kX = {1, 2, 3, 4, 5, 6, 7, 8, 9};
const std::vector<double> kW = {0, 1, 0, 1, -1, 0, 0, 0, 2};

ConvShape padded_strided(bool flip) {
  return {.h = 3, .w = 3, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 2, .stride_w = 2, .flip_filter = flip};
}

TEST(ConvReference, PaddedStridedCrossCorrelation) {
  const ConvShape shape = padded_strided(false);
  ASSERT_EQ(shape.out_h(), 2);
  ASSERT_EQ(shape.out_w(), 2);
  std::vector<double> y(4, kConvNan);
  conv_forward_reference<double>(shape, 1.0, kX.data(), kW.data(), 0.0, y.data(), false);
  // y00 = -1*x00 + 2*x11 = 9; y01 = x01 - x02 = -1; y10 = x10 - x20 = -3; y11 = x12 + x21 - x22 = 5.
  EXPECT_EQ(y, (std::vector<double>{9, -1, -3, 5}));
}

TEST(ConvReference, ConvolutionModeFlipsTheFilter) {
  std::vector<double> y(4, kConvNan);
  conv_forward_reference<double>(padded_strided(true), 1.0, kX.data(), kW.data(), 0.0, y.data(), false);
  // Flipped w = [[2, 0, 0], [0, -1, 1], [0, 1, 0]]: y00 = -x00 + x01 + x10 = 5; y01 = -x02 + x12 = 3;
  // y10 = -x20 + x21 = 1; y11 = 2*x11 - x22 = 1.
  EXPECT_EQ(y, (std::vector<double>{5, 3, 1, 1}));
}

TEST(ConvReference, BackwardDataScattersThroughTheFilter) {
  const std::vector<double> dy = {1, 0, 0, 1};
  std::vector<double> dx(9, kConvNan);
  conv_backward_data_reference<double>(padded_strided(false), 1.0, kW.data(), dy.data(), 0.0, dx.data(), false);
  // dy00 reaches x00 (w11 = -1) and x11 (w22 = 2); dy11 reaches x12 (w01), x21 (w10), x22 (w11).
  EXPECT_EQ(dx, (std::vector<double>{-1, 0, 0, 0, 2, 1, 0, 1, -1}));
}

TEST(ConvReference, BackwardFilterCorrelatesInputWithGradient) {
  const std::vector<double> dy = {1, 0, 0, 1};
  std::vector<double> dw(9, 100);
  conv_backward_filter_reference<double>(padded_strided(false), 1.0, kX.data(), dy.data(), 1.0, dw.data(), false);
  // dw[i][j] = x[i-1][j-1] + x[i+1][j+1] (0 outside), plus the prior 100 (beta = 1).
  EXPECT_EQ(dw, (std::vector<double>{105, 106, 100, 108, 110, 102, 100, 104, 105}));
}

TEST(ConvReference, GroupsReadOnlyTheirInputChannels) {
  // 4 input channels, 2 output channels, 2 groups, 1 x 1 spatial: y0 = x0*1 + x1*10, y1 = x2*100 + x3*1000.
  const ConvShape shape{.c = 4, .k = 2, .groups = 2};
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> w = {1, 10, 100, 1000};
  std::vector<float> y(2, std::numeric_limits<float>::quiet_NaN());
  conv_forward_reference<float>(shape, 1.0, x.data(), w.data(), 0.0, y.data(), false);
  EXPECT_EQ(y, (std::vector<float>{21, 4300}));

  std::vector<float> dx(4, -1);
  const std::vector<float> dy = {1, 2};
  conv_backward_data_reference<float>(shape, 1.0, w.data(), dy.data(), 0.0, dx.data(), false);
  EXPECT_EQ(dx, (std::vector<float>{1, 10, 200, 2000}));
}

TEST(ConvReference, DilationSpacesTheTapsAndAlphaBetaBlend) {
  // x = [1, 2, 3, 4, 5] (1 x 5), w = [1, 10], dilation 2: y[q] = x[q] + 10 * x[q + 2] = [31, 42, 53].
  const ConvShape shape{.w = 5, .s = 2, .dilation_w = 2};
  ASSERT_EQ(shape.out_w(), 3);
  const std::vector<float> x = {1, 2, 3, 4, 5};
  const std::vector<float> w = {1, 10};
  std::vector<float> y = {1, 1, 1};
  conv_forward_reference<float>(shape, 2.0, x.data(), w.data(), 1.0, y.data(), false);
  EXPECT_EQ(y, (std::vector<float>{63, 85, 107}));
}

}  // namespace
}  // namespace baton_emu
