// CPU reference of the batch-norm ops (kernels/batch_norm.h): per channel, statistics in double
// (mean, then squared deviations), elementwise results in double rounded once to T (float or
// double). x is [batch, channels, hw]; a null weight means γ = 1, a null bias β = 0. Channels run in
// parallel, each through the per-channel loops of kernels/cpu/batch_norm_isa.h (vectorised for the
// processor), and each channel's sums in order, so the bits do not depend on the thread count.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/batch_norm_isa.h"
#include "kernels/cpu/parallel.h"

namespace baton::kernels::cpu {

// The mean and biased variance of channel c.
template <typename T>
std::array<double, 2> channel_mean_var(const T* x, int64_t batch, int64_t channels, int64_t hw, int64_t c) {
  return isa::channel_mean_var(x, ChannelOf{batch, channels, hw, c});
}

// y = (x − mean[c])·invstd[c]·γ[c] + β[c] for every channel.
template <typename T>
void batch_norm_normalize(const T* x, const T* weight, const T* bias, int64_t batch, int64_t channels, int64_t hw,
                          const std::vector<double>& mean, const std::vector<double>& invstd, T* y) {
  rows_for(channels, batch * hw, [&](int64_t c) {
    const auto k = static_cast<size_t>(c);
    const double scale = invstd[k] * (weight != nullptr ? static_cast<double>(weight[c]) : 1.0);
    const double shift = bias != nullptr ? static_cast<double>(bias[c]) : 0.0;
    isa::normalize_channel(x, ChannelOf{batch, channels, hw, c}, mean[k], scale, shift, y);
  });
}

// One channel's running statistics after a batch of `count` values per channel with this mean and
// biased variance, as PyTorch: r = (1 − momentum)·r + momentum·s, with the unbiased variance.
template <typename T>
void update_running_statistics(T& running_mean, T& running_var, double mean, double var, double count,
                               double momentum) {
  running_mean = static_cast<T>((1.0 - momentum) * static_cast<double>(running_mean) + momentum * mean);
  running_var =
      static_cast<T>((1.0 - momentum) * static_cast<double>(running_var) + momentum * var * count / (count - 1.0));
}

// Batch statistics (biased variance), the normalised output, and the running statistics updated
// when running_mean is not null (running_var then neither).
template <typename T>
void batch_norm_forward_train(const T* x, const T* weight, const T* bias, int64_t batch, int64_t channels, int64_t hw,
                              double eps, double momentum, T* y, T* save_mean, T* save_invstd, T* running_mean,
                              T* running_var) {
  const double count = static_cast<double>(batch * hw);
  std::vector<double> mean(static_cast<size_t>(channels)), invstd(static_cast<size_t>(channels));
  rows_for(channels, batch * hw, [&](int64_t c) {
    const auto k = static_cast<size_t>(c);
    const auto [channel_mean, var] = channel_mean_var(x, batch, channels, hw, c);
    mean[k] = channel_mean;
    invstd[k] = 1.0 / std::sqrt(var + eps);
    save_mean[c] = static_cast<T>(mean[k]);
    save_invstd[c] = static_cast<T>(invstd[k]);
    if (running_mean != nullptr) {
      update_running_statistics(running_mean[c], running_var[c], mean[k], var, count, momentum);
    }
  });
  batch_norm_normalize(x, weight, bias, batch, channels, hw, mean, invstd, y);
}

// Backward for per-channel mean and invstd. With x̂ = (x − mean)·invstd, bias_grad += Σ dy and
// weight_grad += Σ dy·x̂ (each skipped when null); dx (skipped when null) = γ·invstd·dy, less
// Σdy/M + x̂·Σ(dy·x̂)/M when `batch_stats` (the statistics were computed from x).
template <typename T>
void batch_norm_backward(const T* x, const T* dy, const T* weight, int64_t batch, int64_t channels, int64_t hw,
                         const std::vector<double>& mean, const std::vector<double>& invstd, bool batch_stats, T* dx,
                         T* weight_grad, T* bias_grad) {
  const double count = static_cast<double>(batch * hw);
  rows_for(channels, batch * hw, [&](int64_t c) {
    const auto k = static_cast<size_t>(c);
    const ChannelOf at{batch, channels, hw, c};
    const auto [sum_dy, sum_dy_xhat] = isa::backward_sums(x, dy, at, mean[k], invstd[k]);
    if (weight_grad != nullptr) weight_grad[c] = static_cast<T>(static_cast<double>(weight_grad[c]) + sum_dy_xhat);
    if (bias_grad != nullptr) bias_grad[c] = static_cast<T>(static_cast<double>(bias_grad[c]) + sum_dy);
    if (dx == nullptr) return;
    const double scale = invstd[k] * (weight != nullptr ? static_cast<double>(weight[c]) : 1.0);
    const double mean_dy = batch_stats ? sum_dy / count : 0.0;
    const double mean_dy_xhat = batch_stats ? sum_dy_xhat / count : 0.0;
    isa::backward_dx(x, dy, at, mean[k], invstd[k], scale, mean_dy, mean_dy_xhat, dx);
  });
}

}  // namespace baton::kernels::cpu
