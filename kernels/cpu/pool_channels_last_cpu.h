// Max pooling and global average pooling over channels-last activations on the CPU ([N, H, W, C] in
// memory, the channels of a pixel innermost): the row-major loops' results bit for bit. Each channel
// sees the same comparisons (max_pool_window's rule) and its sums the same order, so the loops over a
// pixel's channels are what the compiler vectorises.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scalar.h"
#include "kernels/pool_math.h"

namespace baton::kernels::cpu {

namespace isa {
// max_pool_tap and max_pool_gather for float and int32 indices, cloned per instruction set
// (kernels/cpu/max_pool_isa.cc).
void max_pool_tap(const float* tap, int64_t channels, int32_t i, float* best, int32_t* index);
void max_pool_gather(const int32_t* chosen, const float* g, int64_t channels, int32_t i, double* sum);
}  // namespace isa

// Tap i of a window (its `channels` values) against the window's best so far: a channel takes the tap
// where it is larger or NaN (max_pool_window: NaN wins, the last one; ties keep the first).
template <typename T, typename I>
inline void max_pool_tap_values(const T* tap, int64_t channels, I i, T* best, I* index) {
  for (int64_t ch = 0; ch < channels; ++ch) {
    const Acc<T> v = load(tap[ch]), b = load(best[ch]);
    const bool take = v > b || v != v;
    best[ch] = take ? tap[ch] : best[ch];
    index[ch] = take ? i : index[ch];
  }
}

// max_pool_tap_values, through the clone for this processor for float and int32 indices.
template <typename T, typename I>
inline void max_pool_tap(const T* tap, int64_t channels, I i, T* best, I* index) {
  if constexpr (std::is_same_v<T, float> && std::is_same_v<I, int32_t>) {
    isa::max_pool_tap(tap, channels, i, best, index);
  } else {
    max_pool_tap_values(tap, channels, i, best, index);
  }
}

// x [samples, in_h, in_w, channels] -> y, indices [samples, out_h, out_w, channels]; an index is
// h·in_w + w within the plane, as in the row-major layout. Output rows in parallel.
template <typename T, typename I>
void max_pool2d_forward_channels_last(const T* x, int64_t samples, int64_t channels, const PoolPlane& p, T* y,
                                      I* indices) {
  const int64_t in_plane = p.in_h * p.in_w;
  rows_for(samples * p.out_h, p.out_w * p.kernel_h * p.kernel_w * channels, [&](int64_t row) {
    const T* sample = x + row / p.out_h * in_plane * channels;
    const int64_t h0 = row % p.out_h * p.stride_h - p.pad_h;
    const TapRange rows = taps_inside(h0, p.kernel_h, p.dilation_h, p.in_h);
    for (int64_t ow = 0; ow < p.out_w; ++ow) {
      T* best = y + (row * p.out_w + ow) * channels;
      I* index = indices + (row * p.out_w + ow) * channels;
      const int64_t w0 = ow * p.stride_w - p.pad_w;
      const TapRange cols = taps_inside(w0, p.kernel_w, p.dilation_w, p.in_w);
      bool first = true;
      for (int64_t kh = rows.first; kh < rows.end; ++kh) {
        for (int64_t kw = cols.first; kw < cols.end; ++kw) {
          const int64_t i = (h0 + kh * p.dilation_h) * p.in_w + w0 + kw * p.dilation_w;
          const T* tap = sample + i * channels;
          if (first) {
            std::copy(tap, tap + channels, best);
            std::fill(index, index + channels, static_cast<I>(i));
            first = false;
          } else {
            max_pool_tap(tap, channels, static_cast<I>(i), best, index);
          }
        }
      }
      if (first) {  // every tap in the padding
        std::fill(best, best + channels, store<T>(-static_cast<Acc<T>>(INFINITY)));
        std::fill(index, index + channels, static_cast<I>(-1));
      }
    }
  });
}

// sum[ch] += g[ch] where chosen[ch] is input element i: one covering window's share of the pixel's
// gradients. Elsewhere the term's bits are masked to +0.0, which leaves a sum that starts at +0.0
// unchanged (it never becomes -0.0); masks, unlike a select, let GCC vectorise the loop.
template <typename T, typename I>
inline void max_pool_gather_values(const I* chosen, const T* g, int64_t channels, I i, double* sum) {
  for (int64_t ch = 0; ch < channels; ++ch) {
    const uint64_t keep = -static_cast<uint64_t>(chosen[ch] == i);  // all ones or all zeros
    sum[ch] += std::bit_cast<double>(std::bit_cast<uint64_t>(static_cast<double>(load(g[ch]))) & keep);
  }
}

// max_pool_gather_values, through the clone for this processor for float and int32 indices.
template <typename T, typename I>
inline void max_pool_gather(const I* chosen, const T* g, int64_t channels, I i, double* sum) {
  if constexpr (std::is_same_v<T, float> && std::is_same_v<I, int32_t>) {
    isa::max_pool_gather(chosen, g, channels, i, sum);
  } else {
    max_pool_gather_values(chosen, g, channels, i, sum);
  }
}

// dx = the sum, over the outputs whose window chose each input element, of dy: each input pixel
// gathers from the windows covering it in decreasing output position, in double, as the row-major
// loop adds them, every channel of the pixel at once. Input rows in parallel.
template <typename T, typename I>
void max_pool2d_backward_channels_last(const T* dy, const I* indices, int64_t samples, int64_t channels,
                                       const PoolPlane& p, T* dx) {
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  rows_for(samples * p.in_h, p.in_w * channels * 4, [&](int64_t row) {
    const int64_t sample = row / p.in_h, h = row % p.in_h;
    thread_local std::vector<double> sum;
    sum.resize(static_cast<size_t>(channels));
    for (int64_t w = 0; w < p.in_w; ++w) {
      std::fill(sum.begin(), sum.end(), 0.0);
      for_each_max_pool_window(p, h, w, [&](int64_t o) {
        const int64_t at = (sample * out_plane + o) * channels;
        max_pool_gather(indices + at, dy + at, channels, static_cast<I>(h * p.in_w + w), sum.data());
      });
      T* out = dx + (sample * in_plane + h * p.in_w + w) * channels;
      for (int64_t ch = 0; ch < channels; ++ch) out[ch] = store<T>(static_cast<Acc<T>>(sum[static_cast<size_t>(ch)]));
    }
  });
}

// Channels per parallel task of global pooling's forward.
inline constexpr int64_t kChannelBlock = 64;

// y [samples, channels] = the mean over the hw pixels of x [samples, hw, channels], summed in double in
// pixel order (the row-major loop's order).
template <typename T>
void global_avg_pool2d_forward_channels_last(const T* x, int64_t samples, int64_t hw, int64_t channels, T* y) {
  const int64_t blocks = (channels + kChannelBlock - 1) / kChannelBlock;
  rows_for(samples * blocks, hw * std::min(channels, kChannelBlock), [&](int64_t task) {
    const int64_t sample = task / blocks, c0 = task % blocks * kChannelBlock;
    const int64_t width = std::min(kChannelBlock, channels - c0);
    double sum[kChannelBlock] = {};
    for (int64_t i = 0; i < hw; ++i) {
      const T* pixel = x + (sample * hw + i) * channels + c0;
      for (int64_t ch = 0; ch < width; ++ch) sum[ch] += static_cast<double>(load(pixel[ch]));
    }
    for (int64_t ch = 0; ch < width; ++ch)
      y[sample * channels + c0 + ch] = store<T>(static_cast<Acc<T>>(sum[ch] / static_cast<double>(hw)));
  });
}

// dx [samples, hw, channels] = dy [samples, channels] / hw, divided in Acc<T> as the row-major loop does.
template <typename T>
void global_avg_pool2d_backward_channels_last(const T* dy, int64_t samples, int64_t hw, int64_t channels, T* dx) {
  rows_for(samples, hw * channels, [&](int64_t sample) {
    thread_local std::vector<T> g;
    g.resize(static_cast<size_t>(channels));
    for (int64_t ch = 0; ch < channels; ++ch)
      g[static_cast<size_t>(ch)] = store<T>(load(dy[sample * channels + ch]) / static_cast<Acc<T>>(hw));
    for (int64_t i = 0; i < hw; ++i) std::copy(g.begin(), g.end(), dx + (sample * hw + i) * channels);
  });
}

}  // namespace baton::kernels::cpu
