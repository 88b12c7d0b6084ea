// CPU convolution. For sample i and group g, with Cg = C / groups and Kg = K / groups:
//   columns [Cg·R·S, P·Q] = im2col(x[i, group g's channels])
//   forward:         y[i, g]  = W_g [Kg, Cg·R·S] · columns
//   backward data:   columns  = W_gᵀ · dy[i, g];  dx[i, g] = col2im(columns)
//   backward filter: W_g     += dy[i, g] · columnsᵀ
// A direct() convolution (1×1, stride 1, no padding) uses x / dx itself as the column matrix.
#include "kernels/cpu/conv_cpu.h"

#include <algorithm>

#include "kernels/cpu/gemm_cpu.h"

namespace baton::kernels::cpu {
namespace {

// Calls fn(offset, input_row, iw0) for every (channel, r, s, p) of one group: `offset` is where the Q
// columns of output row p start in the column matrix's row (c, r, s), `input_row` the offset of the
// input row they read (-1 when it lies in the padding), `iw0` the input column read by q = 0.
template <typename Fn>
void for_each_column_row(const ConvGeometry& g, Fn&& fn) {
  const int64_t pq = g.p * g.q;
  for (int64_t c = 0; c < g.group_channels(); ++c) {
    for (int64_t r = 0; r < g.r; ++r) {
      for (int64_t s = 0; s < g.s; ++s) {
        const int64_t row = (c * g.r + r) * g.s + s;
        for (int64_t p = 0; p < g.p; ++p) {
          const int64_t ih = p * g.stride_h - g.pad_h + r * g.dilation_h;
          const int64_t input_row = ih < 0 || ih >= g.h ? -1 : (c * g.h + ih) * g.w;
          fn(row * pq + p * g.q, input_row, s * g.dilation_w - g.pad_w);
        }
      }
    }
  }
}

// columns[(c·R + r)·S + s, p·Q + q] = x[c, p·stride + r·dilation - pad, ...] (0 in the padding).
template <typename T>
void im2col(const ConvGeometry& g, const T* x, T* columns) {
  for_each_column_row(g, [&](int64_t out, int64_t input_row, int64_t iw0) {
    T* dst = columns + out;
    if (input_row < 0) {
      std::fill(dst, dst + g.q, T(0));
      return;
    }
    const T* src = x + input_row;
    for (int64_t q = 0, iw = iw0; q < g.q; ++q, iw += g.stride_w) dst[q] = iw >= 0 && iw < g.w ? src[iw] : T(0);
  });
}

// The adjoint of im2col: dx[...] += columns[...] (dx zeroed by the caller).
template <typename T>
void col2im(const ConvGeometry& g, const T* columns, T* dx) {
  for_each_column_row(g, [&](int64_t in, int64_t input_row, int64_t iw0) {
    if (input_row < 0) return;
    const T* src = columns + in;
    T* dst = dx + input_row;
    for (int64_t q = 0, iw = iw0; q < g.q; ++q, iw += g.stride_w) {
      if (iw >= 0 && iw < g.w) dst[iw] += src[q];
    }
  });
}

// Sample i, group gi of an [n, channels, spatial] tensor with `per_group` channels a group.
template <typename T>
T* group_block(T* base, int64_t i, int64_t gi, int64_t channels, int64_t per_group, int64_t spatial) {
  return base + (i * channels + gi * per_group) * spatial;
}

// Calls fn(i, gi, columns) for every sample i and group gi, with the column matrix of that group of
// x: x itself when direct(), else im2col into `buffer`.
template <typename T, typename Fn>
void for_each_group_columns(const ConvGeometry& g, const T* x, T* buffer, Fn&& fn) {
  const int64_t cg = g.group_channels();
  for (int64_t i = 0; i < g.n; ++i) {
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const T* xg = group_block(x, i, gi, g.c, cg, g.h * g.w);
      if (g.direct()) {
        fn(i, gi, xg);
        continue;
      }
      im2col(g, xg, buffer);
      fn(i, gi, static_cast<const T*>(buffer));
    }
  }
}

}  // namespace

template <typename T>
void conv2d_forward(const ConvGeometry& g, const T* x, const T* w, T* y, T* columns) {
  const int64_t kg = g.group_filters(), crs = g.group_channels() * g.r * g.s, pq = g.p * g.q;
  for_each_group_columns(g, x, columns, [&](int64_t i, int64_t gi, const T* cols) {
    gemm<T>(false, false, kg, pq, crs, T(1), w + gi * kg * crs, cols, T(0), group_block(y, i, gi, g.k, kg, pq));
  });
}

template <typename T>
void conv2d_backward_data(const ConvGeometry& g, const T* dy, const T* w, T* dx, T* columns) {
  const int64_t cg = g.group_channels(), kg = g.group_filters(), crs = cg * g.r * g.s, pq = g.p * g.q;
  for (int64_t i = 0; i < g.n; ++i) {
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const T* dyg = group_block(dy, i, gi, g.k, kg, pq);
      T* dxg = group_block(dx, i, gi, g.c, cg, g.h * g.w);
      if (g.direct()) {
        gemm<T>(true, false, crs, pq, kg, T(1), w + gi * kg * crs, dyg, T(0), dxg);
        continue;
      }
      gemm<T>(true, false, crs, pq, kg, T(1), w + gi * kg * crs, dyg, T(0), columns);
      std::fill(dxg, dxg + cg * g.h * g.w, T(0));
      col2im(g, columns, dxg);
    }
  }
}

template <typename T>
void conv2d_backward_filter(const ConvGeometry& g, const T* x, const T* dy, T* dw, T* columns) {
  const int64_t kg = g.group_filters(), crs = g.group_channels() * g.r * g.s, pq = g.p * g.q;
  for_each_group_columns(g, x, columns, [&](int64_t i, int64_t gi, const T* cols) {
    gemm<T>(false, true, kg, crs, pq, T(1), group_block(dy, i, gi, g.k, kg, pq), cols, T(1), dw + gi * kg * crs);
  });
}

#define BATON_CONV_CPU_DEFINE(T)                                                          \
  template void conv2d_forward<T>(const ConvGeometry&, const T*, const T*, T*, T*);       \
  template void conv2d_backward_data<T>(const ConvGeometry&, const T*, const T*, T*, T*); \
  template void conv2d_backward_filter<T>(const ConvGeometry&, const T*, const T*, T*, T*);
BATON_CONV_CPU_DEFINE(float)
BATON_CONV_CPU_DEFINE(double)
#undef BATON_CONV_CPU_DEFINE

}  // namespace baton::kernels::cpu
