// The reference batch-normalisation loops against hand-computed 2 x 2 cases: training forward with
// running statistics (unbiased variance), saved mean and inverse std, inference, epsilon, backward.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "batch_norm_reference.h"

namespace baton_emu {
namespace {

constexpr double kBatchNormNan = std::numeric_limits<double>::quiet_NaN();

TEST(BatchNormReference, TrainingForwardOverTheBatchPerChannel) {
  // n = 2, c = 2 (NCHW storage [x(0,0), x(0,1), x(1,0), x(1,1)]): channel 0 holds {1, 3} (mean 2,
  // variance 1, unbiased 2), channel 1 holds {2, 6} (mean 4, variance 4, unbiased 8). epsilon = 0.
  const BatchNormShape shape{.n = 2, .c = 2};
  const std::vector<double> x = {1, 2, 3, 6};
  const std::vector<double> scale = {2, 3}, bias = {0.5, -1};
  std::vector<double> y(4, kBatchNormNan), running_mean = {10, 20}, running_var = {1, 1}, save_mean(2), save_inv_std(2);
  batch_norm_forward_training_reference<double>(shape, 1.0, 0.0, x.data(), y.data(), scale.data(), bias.data(), 0.5,
                                                running_mean.data(), running_var.data(), 0.0, save_mean.data(),
                                                save_inv_std.data());
  // xhat = -1, +1 in both channels: y = scale * xhat + bias.
  EXPECT_EQ(y, (std::vector<double>{-1.5, -4, 2.5, 2}));
  EXPECT_EQ(running_mean, (std::vector<double>{6, 12}));    // 0.5 * mean + 0.5 * prior
  EXPECT_EQ(running_var, (std::vector<double>{1.5, 4.5}));  // 0.5 * unbiased + 0.5 * prior
  EXPECT_EQ(save_mean, (std::vector<double>{2, 4}));
  EXPECT_EQ(save_inv_std, (std::vector<double>{1, 0.5}));
}

TEST(BatchNormReference, EpsilonIsAddedToTheBiasedVarianceAndBetaBlends) {
  // One channel {0, 2}: mean 1, variance 1; epsilon 3 gives inverse std 0.5, xhat = -0.5, +0.5.
  const BatchNormShape shape{.n = 2};
  const std::vector<float> x = {0, 2}, scale = {4}, bias = {0};
  std::vector<float> y = {10, 10}, save_mean(1), save_inv_std(1);
  batch_norm_forward_training_reference<float>(shape, 1.0, 0.5, x.data(), y.data(), scale.data(), bias.data(), 1.0,
                                               nullptr, nullptr, 3.0, save_mean.data(), save_inv_std.data());
  EXPECT_EQ(y, (std::vector<float>{3, 7}));  // scale * xhat + 0.5 * 10
  EXPECT_EQ(save_inv_std[0], 0.5f);
}

TEST(BatchNormReference, InferenceUsesTheGivenStatistics) {
  const BatchNormShape shape{.n = 1, .c = 2};
  const std::vector<double> x = {5, 5}, scale = {1, 2}, bias = {0, 1}, mean = {1, 3}, var = {3, 0};
  std::vector<double> y(2, kBatchNormNan);
  batch_norm_forward_inference_reference<double>(shape, 2.0, 0.0, x.data(), y.data(), scale.data(), bias.data(),
                                                 mean.data(), var.data(), 1.0);
  // channel 0: (5 - 1) / sqrt(4) = 2, y = 2 * 2; channel 1: 2 * (5 - 3) / 1 + 1 = 5, y = 2 * 5.
  EXPECT_EQ(y, (std::vector<double>{4, 10}));
}

TEST(BatchNormReference, PerActivationNormalisesEachPositionOverTheBatch) {
  // n = 2, c = 1, h = 1, w = 2: position 0 holds {0, 2}, position 1 holds {1, 5}.
  const BatchNormShape shape{.n = 2, .w = 2, .per_activation = true};
  const std::vector<double> x = {0, 1, 2, 5}, scale = {1, 1}, bias = {0, 0};
  std::vector<double> y(4, kBatchNormNan), save_mean(2), save_inv_std(2);
  batch_norm_forward_training_reference<double>(shape, 1.0, 0.0, x.data(), y.data(), scale.data(), bias.data(), 1.0,
                                                nullptr, nullptr, 0.0, save_mean.data(), save_inv_std.data());
  EXPECT_EQ(save_mean, (std::vector<double>{1, 3}));
  EXPECT_EQ(save_inv_std, (std::vector<double>{1, 0.5}));
  EXPECT_EQ(y, (std::vector<double>{-1, -1, 1, 1}));
}

TEST(BatchNormReference, BackwardOfASpatial2x2Channel) {
  // x = [[1, 1], [3, 3]] (1 x 1 x 2 x 2): mean 2, variance 1, xhat = [-1, -1, 1, 1]; scale 2, m = 4.
  // dy = [1, 2, 3, 6]: dbias = 12, dscale = 6, dx = 2 / 4 * (4 dy - 12 - 6 xhat) = [-1, 1, -3, 3].
  const BatchNormShape shape{.h = 2, .w = 2};
  const std::vector<double> x = {1, 1, 3, 3}, dy = {1, 2, 3, 6}, scale = {2};
  std::vector<double> dx(4, kBatchNormNan), dscale = {kBatchNormNan}, dbias = {kBatchNormNan};
  batch_norm_backward_reference<double>(shape, 1.0, 0.0, 1.0, 0.0, x.data(), dy.data(), dx.data(), scale.data(),
                                        dscale.data(), dbias.data(), 0.0, nullptr, nullptr);
  EXPECT_EQ(dx, (std::vector<double>{-1, 1, -3, 3}));
  EXPECT_EQ(dscale[0], 6);
  EXPECT_EQ(dbias[0], 12);

  // The same from saved statistics, blended: dx = 2 * dx + 1 * prior, params = 1 * grad + 1 * prior.
  const std::vector<double> saved_mean = {2}, saved_inv_std = {1};
  dx = {1, 1, 1, 1};
  dscale = {10};
  dbias = {0.5};
  batch_norm_backward_reference<double>(shape, 2.0, 1.0, 1.0, 1.0, x.data(), dy.data(), dx.data(), scale.data(),
                                        dscale.data(), dbias.data(), 0.0, saved_mean.data(), saved_inv_std.data());
  EXPECT_EQ(dx, (std::vector<double>{-1, 3, -5, 7}));
  EXPECT_EQ(dscale[0], 16);
  EXPECT_EQ(dbias[0], 12.5);
}

}  // namespace
}  // namespace baton_emu
