// Sums of many terms in double, kept in 8 interleaved partial sums (independent chains the processor
// overlaps and vectorises) folded in a fixed order, and whole-tensor sums split into fixed ranges
// summed in parallel: the bits depend on the sizes only, never on the thread count.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/cpu/parallel.h"

namespace baton::kernels::cpu {

inline constexpr int64_t kSumLanes = 8;

// K sums, each in kSumLanes partial sums.
template <int K>
struct LaneSums {
  double lanes[K][kSumLanes] = {};

  // Adds term(i) for i in [begin, end) (term returns std::array<double, K>); element i goes to lane
  // (i - begin) mod kSumLanes.
  template <typename Term>
  void add(int64_t begin, int64_t end, const Term& term) {
    int64_t i = begin;
    for (; i + kSumLanes <= end; i += kSumLanes) {
      for (int64_t l = 0; l < kSumLanes; ++l) {
        const std::array<double, K> t = term(i + l);
        for (int k = 0; k < K; ++k) lanes[k][l] += t[static_cast<size_t>(k)];
      }
    }
    for (int64_t l = 0; i < end; ++i, ++l) {
      const std::array<double, K> t = term(i);
      for (int k = 0; k < K; ++k) lanes[k][l] += t[static_cast<size_t>(k)];
    }
  }

  // The K totals: the lanes added pairwise, in a fixed tree.
  std::array<double, K> fold() const {
    std::array<double, K> sums{};
    for (int k = 0; k < K; ++k) {
      const double* v = lanes[k];
      sums[static_cast<size_t>(k)] = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
    }
    return sums;
  }
};

// Σ term(i) over [0, n) for K sums at once: ranges of kRangeElements summed in parallel (LaneSums),
// then the ranges' totals added in index order.
template <int K, typename Term>
std::array<double, K> parallel_sums(int64_t n, const Term& term) {
  const std::vector<std::array<double, K>> totals =
      range_results<std::array<double, K>>(n, [&](int64_t begin, int64_t end) {
        LaneSums<K> sums;
        sums.add(begin, end, term);
        return sums.fold();
      });
  std::array<double, K> total{};
  for (const std::array<double, K>& t : totals) {
    for (int k = 0; k < K; ++k) total[static_cast<size_t>(k)] += t[static_cast<size_t>(k)];
  }
  return total;
}

// Σ of term(i) over channel c's elements of x [batch, channels, hw], for K sums at once: each
// row's elements in LaneSums, rows in order.
template <int K, typename Term>
std::array<double, K> channel_sums(int64_t batch, int64_t channels, int64_t hw, int64_t c, const Term& term) {
  LaneSums<K> sums;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t row = (b * channels + c) * hw;
    sums.add(row, row + hw, term);
  }
  return sums.fold();
}

}  // namespace baton::kernels::cpu
