// Max pooling forward on the CPU, one output row at a time: the columns whose windows lie inside the
// input's width are computed tap by tap across the whole row (loops the compiler vectorises), the
// others by max_pool_window. The same maxima and indices as max_pool_window for every output.
#pragma once

#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/cpu/scalar.h"
#include "kernels/pool_math.h"

namespace baton::kernels::cpu {

// The output columns [first, end) of a row whose windows have every tap inside the input's width.
struct InteriorColumns {
  int64_t first = 0, end = 0;
};

inline InteriorColumns interior_columns(const PoolPlane& p) {
  const int64_t span = (p.kernel_w - 1) * p.dilation_w;  // from a window's first tap to its last
  const int64_t first = (p.pad_w + p.stride_w - 1) / p.stride_w;
  // The last column whose last tap ow·stride_w - pad_w + span is at most in_w - 1.
  const int64_t last_start = p.in_w - 1 - span + p.pad_w;
  const int64_t end = last_start < 0 ? 0 : pool_min(p.out_w, last_start / p.stride_w + 1);
  return {first, pool_max(first, end)};
}

// Row oh's interior columns [c.first, c.end) of one plane `in` into best[0, n) and index[0, n): the
// taps in max_pool_window's order (rows, then columns of the kernel), each compared in every column.
// kStride is the horizontal stride when known at compile time (0: p.stride_w). NaN wins (the last
// one), ties keep the first. Indices are 32-bit: the caller keeps larger planes off this path.
template <int64_t kStride, typename T>
void max_pool_row_interior(const T* in, const PoolPlane& p, int64_t oh, InteriorColumns c, Acc<T>* best,
                           int32_t* index) {
  const int64_t stride = kStride > 0 ? kStride : p.stride_w;
  const int64_t h0 = oh * p.stride_h - p.pad_h;
  const TapRange rows = taps_inside(h0, p.kernel_h, p.dilation_h, p.in_h);
  const int64_t n = c.end - c.first;
  bool first_tap = true;
  for (int64_t kh = rows.first; kh < rows.end; ++kh) {
    for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
      // Input index of this tap in column c.first; column c.first + j adds j·stride.
      const int32_t tap0 =
          static_cast<int32_t>((h0 + kh * p.dilation_h) * p.in_w + c.first * stride - p.pad_w + kw * p.dilation_w);
      const T* x = in + tap0;
      if (first_tap) {
        for (int64_t j = 0; j < n; ++j) {
          best[j] = load(x[j * stride]);
          index[j] = tap0 + static_cast<int32_t>(j * stride);
        }
        first_tap = false;
        continue;
      }
      for (int64_t j = 0; j < n; ++j) {
        const Acc<T> v = load(x[j * stride]);
        const bool take = v > best[j] || v != v;  // v != v: NaN
        best[j] = take ? v : best[j];
        index[j] = take ? tap0 + static_cast<int32_t>(j * stride) : index[j];
      }
    }
  }
  if (first_tap) {  // no tap of this row lies inside the input
    for (int64_t j = 0; j < n; ++j) {
      best[j] = -static_cast<Acc<T>>(INFINITY);
      index[j] = -1;
    }
  }
}

// The same with the stride as a compile-time constant where it is 1 or 2 (loads the compiler vectorises).
template <typename T>
void max_pool_row(const T* in, const PoolPlane& p, int64_t oh, InteriorColumns c, Acc<T>* best, int32_t* index) {
  if (p.stride_w == 1) {
    max_pool_row_interior<1>(in, p, oh, c, best, index);
  } else if (p.stride_w == 2) {
    max_pool_row_interior<2>(in, p, oh, c, best, index);
  } else {
    max_pool_row_interior<0>(in, p, oh, c, best, index);
  }
}

namespace isa {
// max_pool_row for float, cloned for AVX-512, AVX2 and baseline x86-64 (kernels/cpu/max_pool_isa.cc); every
// clone gives the same maxima and indices (comparisons only).
void max_pool_row(const float* in, const PoolPlane& p, int64_t oh, InteriorColumns c, float* best, int32_t* index);
}  // namespace isa

// x [in_h, in_w] -> y, indices [out_h, out_w] for one plane.
template <typename T, typename I>
void max_pool_plane_forward(const T* in, const PoolPlane& p, T* y, I* indices) {
  thread_local std::vector<Acc<T>> best;
  thread_local std::vector<int32_t> index;
  const InteriorColumns c = p.in_h * p.in_w <= INT32_MAX ? interior_columns(p) : InteriorColumns{};
  const auto edge = [&](int64_t oh, int64_t ow) {
    int64_t at = -1;
    y[oh * p.out_w + ow] = store<T>(max_pool_window<Acc<T>>(
        p, oh, ow, [in](int64_t i) { return load(in[i]); }, at));
    indices[oh * p.out_w + ow] = static_cast<I>(at);
  };
  const int64_t n = c.end - c.first;
  best.resize(static_cast<size_t>(pool_max(n, 0)));
  index.resize(best.size());
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    for (int64_t ow = 0; ow < c.first && ow < p.out_w; ++ow) edge(oh, ow);
    if (n > 0) {
      if constexpr (std::is_same_v<T, float>) {
        isa::max_pool_row(in, p, oh, c, best.data(), index.data());
      } else {
        max_pool_row(in, p, oh, c, best.data(), index.data());
      }
      T* y_row = y + oh * p.out_w + c.first;
      I* index_row = indices + oh * p.out_w + c.first;
      for (int64_t j = 0; j < n; ++j) {
        y_row[j] = store<T>(best[static_cast<size_t>(j)]);
        index_row[j] = static_cast<I>(index[static_cast<size_t>(j)]);
      }
    }
    for (int64_t ow = pool_max(c.end, c.first); ow < p.out_w; ++ow) edge(oh, ow);
  }
}

}  // namespace baton::kernels::cpu
