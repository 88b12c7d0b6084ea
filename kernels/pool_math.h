// The per-element pooling formulas shared by the CPU reference and the CUDA kernels: one output
// element from its window, and one input-gradient element gathered from the windows that cover it.
// Element access goes through callables (load(i) -> A), so both backends evaluate one definition.
#pragma once

#include <cmath>
#include <cstdint>

#include "runtime/core/host_device.h"

namespace baton::kernels {

// One input plane and the windows over it (kernels/pool.h's Pool2dGeometry resolved for a size).
struct PoolPlane {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
};

BATON_HOST_DEVICE int64_t pool_min(int64_t a, int64_t b) { return a < b ? a : b; }
BATON_HOST_DEVICE int64_t pool_max(int64_t a, int64_t b) { return a > b ? a : b; }

// The taps [first, end) of a window that starts at `start` (negative inside the leading padding),
// `kernel` taps `dilation` apart, that fall inside [0, size): the others are padding.
struct TapRange {
  int64_t first, end;
};
BATON_HOST_DEVICE TapRange taps_inside(int64_t start, int64_t kernel, int64_t dilation, int64_t size) {
  const int64_t first = start < 0 ? (-start + dilation - 1) / dilation : 0;
  const int64_t end = start >= size ? 0 : pool_min(kernel, (size - 1 - start) / dilation + 1);
  return {first, pool_max(first, end)};
}

// The maximum of window (oh, ow) and, in `index`, h·in_w + w of the element chosen: NaN wins (the
// last one), ties keep the first. -inf and index -1 when no tap lies inside the input.
template <typename A, typename Load>
BATON_HOST_DEVICE A max_pool_window(const PoolPlane& p, int64_t oh, int64_t ow, const Load& load, int64_t& index) {
  const int64_t h0 = oh * p.stride_h - p.pad_h, w0 = ow * p.stride_w - p.pad_w;
  const TapRange rows = taps_inside(h0, p.kernel_h, p.dilation_h, p.in_h);
  const TapRange cols = taps_inside(w0, p.kernel_w, p.dilation_w, p.in_w);
  A best = -static_cast<A>(INFINITY);
  index = -1;
  for (int64_t kh = rows.first; kh < rows.end; ++kh) {
    const int64_t row = (h0 + kh * p.dilation_h) * p.in_w;
    for (int64_t kw = cols.first; kw < cols.end; ++kw) {
      const int64_t i = row + w0 + kw * p.dilation_w;
      const A v = load(i);
      if (index < 0 || v > best || v != v) {  // v != v: NaN
        best = v;
        index = i;
      }
    }
  }
  return best;
}

// Whether input element i = h·in_w + w is a tap of window (oh, ow).
BATON_HOST_DEVICE bool is_tap_of_window(const PoolPlane& p, int64_t oh, int64_t ow, int64_t i) {
  const int64_t dh = i / p.in_w - (oh * p.stride_h - p.pad_h), dw = i % p.in_w - (ow * p.stride_w - p.pad_w);
  return dh >= 0 && dw >= 0 && dh % p.dilation_h == 0 && dw % p.dilation_w == 0 && dh / p.dilation_h < p.kernel_h &&
         dw / p.dilation_w < p.kernel_w;
}

// Calls visit(o) for every output o = oh·out_w + ow whose window has a tap on input (h, w), in a
// fixed order (taps of the kernel in row-major order).
template <typename Visit>
BATON_HOST_DEVICE void for_each_max_pool_window(const PoolPlane& p, int64_t h, int64_t w, const Visit& visit) {
  for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
    const int64_t th = h + p.pad_h - kh * p.dilation_h;  // oh·stride_h when tap kh of window oh is h
    if (th < 0) break;
    if (th % p.stride_h != 0 || th / p.stride_h >= p.out_h) continue;
    for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
      const int64_t tw = w + p.pad_w - kw * p.dilation_w;
      if (tw < 0) break;
      if (tw % p.stride_w != 0 || tw / p.stride_w >= p.out_w) continue;
      visit((th / p.stride_h) * p.out_w + tw / p.stride_w);
    }
  }
}

// The gradient of input (h, w) of a max pool: the sum of grad(o) over the windows o that chose it.
template <typename A, typename LoadGrad, typename LoadIndex>
BATON_HOST_DEVICE A max_pool_input_grad(const PoolPlane& p, int64_t h, int64_t w, const LoadGrad& grad,
                                        const LoadIndex& index) {
  const int64_t target = h * p.in_w + w;
  A acc = A(0);
  for_each_max_pool_window(p, h, w, [&](int64_t o) {
    if (index(o) == target) acc += grad(o);
  });
  return acc;
}

// Window (oh, ow) of an average pool: the taps [h0, h1) x [w0, w1) inside the input and the divisor
// (PyTorch's avg_pool2d: the window clipped to the padded input, or only the taps inside the input).
struct AvgPoolWindow {
  int64_t h0, h1, w0, w1, divisor;
  BATON_HOST_DEVICE bool empty() const { return h0 >= h1 || w0 >= w1; }
};

BATON_HOST_DEVICE AvgPoolWindow avg_pool_window(const PoolPlane& p, bool count_include_pad, int64_t oh, int64_t ow) {
  AvgPoolWindow win;
  win.h0 = oh * p.stride_h - p.pad_h;
  win.w0 = ow * p.stride_w - p.pad_w;
  win.h1 = pool_min(win.h0 + p.kernel_h, p.in_h + p.pad_h);
  win.w1 = pool_min(win.w0 + p.kernel_w, p.in_w + p.pad_w);
  const int64_t padded_size = (win.h1 - win.h0) * (win.w1 - win.w0);
  win.h0 = pool_max(win.h0, 0);
  win.w0 = pool_max(win.w0, 0);
  win.h1 = pool_min(win.h1, p.in_h);
  win.w1 = pool_min(win.w1, p.in_w);
  win.divisor = count_include_pad ? padded_size : (win.h1 - win.h0) * (win.w1 - win.w0);
  return win;
}

// The mean of window (oh, ow); 0 for a window with no tap inside the input.
template <typename A, typename Load>
BATON_HOST_DEVICE A avg_pool_output(const PoolPlane& p, bool count_include_pad, int64_t oh, int64_t ow,
                                    const Load& load) {
  const AvgPoolWindow win = avg_pool_window(p, count_include_pad, oh, ow);
  if (win.empty()) return A(0);
  A sum = A(0);
  for (int64_t h = win.h0; h < win.h1; ++h) {
    for (int64_t w = win.w0; w < win.w1; ++w) sum += load(h * p.in_w + w);
  }
  return sum / static_cast<A>(win.divisor);
}

// The first window along an axis whose span [o·stride − pad, o·stride − pad + kernel) reaches
// position t − pad, for t = position + pad >= 0.
BATON_HOST_DEVICE int64_t first_covering_window(int64_t t, int64_t kernel, int64_t stride) {
  return t < kernel ? 0 : (t - kernel) / stride + 1;
}

// The gradient of input (h, w) of an average pool: the sum of grad(o) / divisor over the windows o
// covering it, in row-major order of the windows.
template <typename A, typename LoadGrad>
BATON_HOST_DEVICE A avg_pool_input_grad(const PoolPlane& p, bool count_include_pad, int64_t h, int64_t w,
                                        const LoadGrad& grad) {
  const int64_t th = h + p.pad_h, tw = w + p.pad_w;
  const int64_t oh_end = pool_min(th / p.stride_h + 1, p.out_h), ow_end = pool_min(tw / p.stride_w + 1, p.out_w);
  A acc = A(0);
  for (int64_t oh = first_covering_window(th, p.kernel_h, p.stride_h); oh < oh_end; ++oh) {
    for (int64_t ow = first_covering_window(tw, p.kernel_w, p.stride_w); ow < ow_end; ++ow) {
      const AvgPoolWindow win = avg_pool_window(p, count_include_pad, oh, ow);
      acc += grad(oh * p.out_w + ow) / static_cast<A>(win.divisor);
    }
  }
  return acc;
}

// Adaptive average pooling (PyTorch's adaptive_avg_pool2d) from a plane of `in` positions to `out`
// along an axis: output position o averages input positions [floor(o·in/out), ceil((o+1)·in/out)).
// PoolPlane's in_* and out_* sizes are used; its window fields are not.
BATON_HOST_DEVICE int64_t adaptive_window_start(int64_t o, int64_t in, int64_t out) { return o * in / out; }
BATON_HOST_DEVICE int64_t adaptive_window_end(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

// The mean of adaptive window (oh, ow).
template <typename A, typename Load>
BATON_HOST_DEVICE A adaptive_avg_pool_output(const PoolPlane& p, int64_t oh, int64_t ow, const Load& load) {
  const int64_t h0 = adaptive_window_start(oh, p.in_h, p.out_h), h1 = adaptive_window_end(oh, p.in_h, p.out_h);
  const int64_t w0 = adaptive_window_start(ow, p.in_w, p.out_w), w1 = adaptive_window_end(ow, p.in_w, p.out_w);
  A sum = A(0);
  for (int64_t h = h0; h < h1; ++h) {
    for (int64_t w = w0; w < w1; ++w) sum += load(h * p.in_w + w);
  }
  return sum / static_cast<A>((h1 - h0) * (w1 - w0));
}

// The gradient of input (h, w) of an adaptive average pool: the sum of grad(o) / window size over
// the windows o covering it, in row-major order of the windows. Along an axis the first window
// covering position h is floor(h·out/in); the windows after it cover h while they start at or before h.
template <typename A, typename LoadGrad>
BATON_HOST_DEVICE A adaptive_avg_pool_input_grad(const PoolPlane& p, int64_t h, int64_t w, const LoadGrad& grad) {
  A acc = A(0);
  for (int64_t oh = h * p.out_h / p.in_h; oh < p.out_h && adaptive_window_start(oh, p.in_h, p.out_h) <= h; ++oh) {
    const int64_t rows = adaptive_window_end(oh, p.in_h, p.out_h) - adaptive_window_start(oh, p.in_h, p.out_h);
    for (int64_t ow = w * p.out_w / p.in_w; ow < p.out_w && adaptive_window_start(ow, p.in_w, p.out_w) <= w; ++ow) {
      const int64_t cols = adaptive_window_end(ow, p.in_w, p.out_w) - adaptive_window_start(ow, p.in_w, p.out_w);
      acc += grad(oh * p.out_w + ow) / static_cast<A>(rows * cols);
    }
  }
  return acc;
}

}  // namespace baton::kernels
