// How the CPU kernels split their loops over the thread pool (runtime/core/cpu_threads.h): fixed
// ranges that depend on the sizes only, so results are the same bits whatever the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/core/cpu_threads.h"

namespace baton::kernels::cpu {

// Elements a range of a memory-bound loop holds: 128 KiB of float, enough to amortise a thread's wake-up.
inline constexpr int64_t kRangeElements = int64_t{1} << 15;

// fn(i) for every i in [0, n), ranges of kRangeElements in parallel. fn(i) must touch element i only.
template <typename Fn>
void pointwise_for(int64_t n, const Fn& fn) {
  parallel_for(n, kRangeElements, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

// fn(row) for every row in [0, rows), each row `row_elements` long, in parallel ranges of about
// kRangeElements elements. fn(row) must touch its own row's outputs only.
template <typename Fn>
void rows_for(int64_t rows, int64_t row_elements, const Fn& fn) {
  const int64_t per_range = std::max<int64_t>(1, kRangeElements / std::max<int64_t>(1, row_elements));
  parallel_for(rows, per_range, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) fn(row);
  });
}

// fn(begin, end) -> R for each range of kRangeElements of [0, n), in parallel; the results in range
// order, for the caller to combine in a fixed order (the same bits whatever the thread count).
template <typename R, typename Fn>
std::vector<R> range_results(int64_t n, const Fn& fn) {
  std::vector<R> results(static_cast<size_t>((n + kRangeElements - 1) / kRangeElements));
  parallel_for(n, kRangeElements, [&](int64_t begin, int64_t end) {
    results[static_cast<size_t>(begin / kRangeElements)] = fn(begin, end);
  });
  return results;
}

}  // namespace baton::kernels::cpu
