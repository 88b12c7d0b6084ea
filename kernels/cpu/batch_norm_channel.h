// The arithmetic of the CPU batch-norm ops for one channel: statistics in double (mean, then squared
// deviations, each in LaneSums' order), elementwise results in double rounded once to T. x is
// [batch, channels, hw]; a null weight means γ = 1, a null bias β = 0. kernels/cpu/batch_norm_isa.cc
// compiles these for several instruction sets; kernels/cpu/batch_norm_cpu.h runs them over channels.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "kernels/cpu/lane_sums.h"

namespace baton::kernels::cpu {

// The shape of x and the channel a call works on.
struct ChannelOf {
  int64_t batch, channels, hw, c;
};

// Calls fn(index) for the elements of channel `at.c`, in memory order.
template <typename Fn>
void for_each_in_channel(const ChannelOf& at, const Fn& fn) {
  for (int64_t b = 0; b < at.batch; ++b) {
    const int64_t row = (b * at.channels + at.c) * at.hw;
    for (int64_t i = row; i < row + at.hw; ++i) fn(i);
  }
}

// The mean and biased variance of the channel (two passes: the mean, then squared deviations).
template <typename T>
std::array<double, 2> channel_mean_var_body(const T* x, const ChannelOf& at) {
  const double count = static_cast<double>(at.batch * at.hw);
  const auto sums = [&](const auto& term) { return channel_sums<1>(at.batch, at.channels, at.hw, at.c, term)[0]; };
  const double mean = sums([&](int64_t i) { return std::array{static_cast<double>(x[i])}; }) / count;
  const double squares = sums([&](int64_t i) {
    const double d = static_cast<double>(x[i]) - mean;
    return std::array{d * d};
  });
  return {mean, squares / count};
}

// y = (x − mean)·scale + shift over the channel.
template <typename T>
void normalize_channel_body(const T* x, const ChannelOf& at, double mean, double scale, double shift, T* y) {
  for_each_in_channel(at,
                      [&](int64_t i) { y[i] = static_cast<T>((static_cast<double>(x[i]) - mean) * scale + shift); });
}

// The sums of the backward pass over the channel: {Σ dy, Σ dy·x̂} with x̂ = (x − mean)·invstd.
template <typename T>
std::array<double, 2> backward_sums_body(const T* x, const T* dy, const ChannelOf& at, double mean, double invstd) {
  return channel_sums<2>(at.batch, at.channels, at.hw, at.c, [&](int64_t i) {
    const double g = static_cast<double>(dy[i]);
    return std::array{g, g * (static_cast<double>(x[i]) - mean) * invstd};
  });
}

// dx = scale·(dy − mean_dy − x̂·mean_dy_xhat) over the channel (cpu::batch_norm_backward).
template <typename T>
void backward_dx_body(const T* x, const T* dy, const ChannelOf& at, double mean, double invstd, double scale,
                      double mean_dy, double mean_dy_xhat, T* dx) {
  for_each_in_channel(at, [&](int64_t i) {
    const double xhat = (static_cast<double>(x[i]) - mean) * invstd;
    dx[i] = static_cast<T>(scale * (static_cast<double>(dy[i]) - mean_dy - xhat * mean_dy_xhat));
  });
}

}  // namespace baton::kernels::cpu
