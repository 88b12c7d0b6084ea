// CPU reference of the reduce family: accumulation in double, in index order.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cpu/scalar.h"

namespace baton::kernels::cpu {

template <typename T>
double sum(const T* x, int64_t n) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(load(x[i]));
  return acc;
}

template <typename T>
double sum_squares(const T* x, int64_t n) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(load(x[i]));
    acc += v * v;
  }
  return acc;
}

// The largest of n > 0 elements; NaN if any element is NaN.
template <typename T>
double max(const T* x, int64_t n) {
  double best = static_cast<double>(load(x[0]));
  for (int64_t i = 1; i < n; ++i) {
    const double v = static_cast<double>(load(x[i]));
    if (v > best || std::isnan(v)) best = v;
    if (std::isnan(best)) break;
  }
  return best;
}

// x is [batch, channels, hw] (NCHW with hw = H·W); out[c] = Σ over b, i of x[b, c, i] · y[b, c, i],
// or of x[b, c, i] alone when y is null.
template <typename T>
void channel_dot(const T* x, const T* y, int64_t batch, int64_t channels, int64_t hw, Acc<T>* out) {
  for (int64_t c = 0; c < channels; ++c) {
    double acc = 0.0;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t row = (b * channels + c) * hw;
      for (int64_t i = row; i < row + hw; ++i) {
        const double v = static_cast<double>(load(x[i]));
        acc += y == nullptr ? v : v * static_cast<double>(load(y[i]));
      }
    }
    out[c] = static_cast<Acc<T>>(acc);
  }
}

}  // namespace baton::kernels::cpu
