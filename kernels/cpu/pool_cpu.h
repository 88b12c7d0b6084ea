// CPU reference of the pooling ops (kernels/pool.h): the shared per-element formulas
// (kernels/pool_math.h) evaluated in double, plane by plane.
#pragma once

#include <cstdint>

#include "kernels/cpu/scalar.h"
#include "kernels/pool_math.h"

namespace baton::kernels::cpu {

// Stores a double result as T (through Acc<T>: exact for maxima, one more rounding for sums).
template <typename T>
T store_double(double v) {
  return store<T>(static_cast<Acc<T>>(v));
}

// x [planes, in_h, in_w] -> y, indices [planes, out_h, out_w]; I is int32_t or int64_t.
template <typename T, typename I>
void max_pool2d_forward(const T* x, int64_t planes, const PoolPlane& p, T* y, I* indices) {
  const int64_t in_size = p.in_h * p.in_w, out_size = p.out_h * p.out_w;
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* xp = x + plane * in_size;
    const auto load_x = [xp](int64_t i) { return static_cast<double>(load(xp[i])); };
    for (int64_t oh = 0; oh < p.out_h; ++oh) {
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        int64_t index = -1;
        const double best = max_pool_window<double>(p, oh, ow, load_x, index);
        const int64_t o = plane * out_size + oh * p.out_w + ow;
        y[o] = store_double<T>(best);
        indices[o] = static_cast<I>(index);
      }
    }
  }
}

template <typename T, typename I>
void max_pool2d_backward(const T* dy, const I* indices, int64_t planes, const PoolPlane& p, T* dx) {
  const int64_t in_size = p.in_h * p.in_w, out_size = p.out_h * p.out_w;
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* gp = dy + plane * out_size;
    const I* ip = indices + plane * out_size;
    const auto load_grad = [gp](int64_t o) { return static_cast<double>(load(gp[o])); };
    const auto load_index = [ip](int64_t o) { return static_cast<int64_t>(ip[o]); };
    for (int64_t h = 0; h < p.in_h; ++h) {
      for (int64_t w = 0; w < p.in_w; ++w) {
        dx[plane * in_size + h * p.in_w + w] =
            store_double<T>(max_pool_input_grad<double>(p, h, w, load_grad, load_index));
      }
    }
  }
}

template <typename T>
void avg_pool2d_forward(const T* x, int64_t planes, const PoolPlane& p, bool count_include_pad, T* y) {
  const int64_t in_size = p.in_h * p.in_w, out_size = p.out_h * p.out_w;
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* xp = x + plane * in_size;
    const auto load_x = [xp](int64_t i) { return static_cast<double>(load(xp[i])); };
    for (int64_t oh = 0; oh < p.out_h; ++oh) {
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        y[plane * out_size + oh * p.out_w + ow] =
            store_double<T>(avg_pool_output<double>(p, count_include_pad, oh, ow, load_x));
      }
    }
  }
}

template <typename T>
void avg_pool2d_backward(const T* dy, int64_t planes, const PoolPlane& p, bool count_include_pad, T* dx) {
  const int64_t in_size = p.in_h * p.in_w, out_size = p.out_h * p.out_w;
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* gp = dy + plane * out_size;
    const auto load_grad = [gp](int64_t o) { return static_cast<double>(load(gp[o])); };
    for (int64_t h = 0; h < p.in_h; ++h) {
      for (int64_t w = 0; w < p.in_w; ++w) {
        dx[plane * in_size + h * p.in_w + w] =
            store_double<T>(avg_pool_input_grad<double>(p, count_include_pad, h, w, load_grad));
      }
    }
  }
}

// y[plane] = the mean of x[plane, 0 .. hw), hw >= 1.
template <typename T>
void global_avg_pool2d_forward(const T* x, int64_t planes, int64_t hw, T* y) {
  for (int64_t plane = 0; plane < planes; ++plane) {
    double sum = 0.0;
    for (int64_t i = plane * hw; i < (plane + 1) * hw; ++i) sum += static_cast<double>(load(x[i]));
    y[plane] = store_double<T>(sum / static_cast<double>(hw));
  }
}

// dx[plane, i] = dy[plane] / hw, divided in Acc<T> as the CUDA kernel does.
template <typename T>
void global_avg_pool2d_backward(const T* dy, int64_t planes, int64_t hw, T* dx) {
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T g = store<T>(load(dy[plane]) / static_cast<Acc<T>>(hw));
    for (int64_t i = plane * hw; i < (plane + 1) * hw; ++i) dx[i] = g;
  }
}

}  // namespace baton::kernels::cpu
