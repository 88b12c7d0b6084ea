// CPU reference of the reduce family: accumulation in double, 8 interleaved partial sums per range
// of kRangeElements, ranges in parallel and their totals added in index order (kernels/cpu/lane_sums.h):
// the bits depend on the sizes only, not on the thread count.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/lane_sums.h"
#include "kernels/cpu/scalar.h"

namespace baton::kernels::cpu {

template <typename T>
double sum(const T* x, int64_t n) {
  return parallel_sums<1>(n, [&](int64_t i) { return std::array{static_cast<double>(load(x[i]))}; })[0];
}

template <typename T>
double sum_squares(const T* x, int64_t n) {
  return parallel_sums<1>(n, [&](int64_t i) {
    const double v = static_cast<double>(load(x[i]));
    return std::array{v * v};
  })[0];
}

// The largest of n > 0 elements; NaN if any element is NaN. Ranges in parallel, then the largest of
// their results (exact: the order does not matter).
template <typename T>
double max(const T* x, int64_t n) {
  // The larger of best and v; NaN wins and stays.
  const auto larger = [](double best, double v) { return v > best || std::isnan(v) ? v : best; };
  const std::vector<double> best = range_results<double>(n, [&](int64_t begin, int64_t end) {
    double b = static_cast<double>(load(x[begin]));
    for (int64_t i = begin + 1; i < end && !std::isnan(b); ++i) b = larger(b, static_cast<double>(load(x[i])));
    return b;
  });
  double result = best[0];
  for (size_t r = 1; r < best.size() && !std::isnan(result); ++r) result = larger(result, best[r]);
  return result;
}

// x is [batch, channels, hw] (NCHW with hw = H·W); out[c] = Σ over b, i of x[b, c, i] · y[b, c, i],
// or of x[b, c, i] alone when y is null. Channels in parallel, each in channel_sums' order.
template <typename T>
void channel_dot(const T* x, const T* y, int64_t batch, int64_t channels, int64_t hw, Acc<T>* out) {
  rows_for(channels, batch * hw, [&](int64_t c) {
    const double total =
        y == nullptr ? channel_sums<1>(batch, channels, hw, c,
                                       [&](int64_t i) { return std::array{static_cast<double>(load(x[i]))}; })[0]
                     : channel_sums<1>(batch, channels, hw, c, [&](int64_t i) {
                         return std::array{static_cast<double>(load(x[i])) * static_cast<double>(load(y[i]))};
                       })[0];
    out[c] = static_cast<Acc<T>>(total);
  });
}

}  // namespace baton::kernels::cpu
