// CPU reference of the pooling ops (kernels/pool.h): the shared per-element formulas
// (kernels/pool_math.h) evaluated in double, plane by plane.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/max_pool_rows.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scalar.h"
#include "kernels/pool_math.h"

namespace baton::kernels::cpu {

// Calls fn(plane, r, c, k) for every element k of [planes, rows, cols]: planes in parallel (split as
// for planes of in_plane elements of work each), each plane's elements in order.
template <typename Fn>
void for_each_plane_element(int64_t planes, int64_t rows, int64_t cols, int64_t in_plane, const Fn& fn) {
  rows_for(planes, in_plane, [&](int64_t plane) {
    int64_t k = plane * rows * cols;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) fn(plane, r, c, k++);
    }
  });
}

// Calls fn(plane, oh, ow, o) for every output element o of [planes, out_h, out_w].
template <typename Fn>
void for_each_output(int64_t planes, const PoolPlane& p, const Fn& fn) {
  for_each_plane_element(planes, p.out_h, p.out_w, p.in_h * p.in_w, fn);
}

// Calls fn(plane, h, w, i) for every input element i of [planes, in_h, in_w].
template <typename Fn>
void for_each_input(int64_t planes, const PoolPlane& p, const Fn& fn) {
  for_each_plane_element(planes, p.in_h, p.in_w, p.in_h * p.in_w, fn);
}

// Element i of `data` as a double.
template <typename T>
auto double_loader(const T* data) {
  return [data](int64_t i) { return static_cast<double>(load(data[i])); };
}

// x [planes, in_h, in_w] -> y, indices [planes, out_h, out_w]; I is int32_t or int64_t. Compared in
// Acc<T>, which holds every T exactly: the maximum is the same as in double. Planes in parallel, each
// row's interior columns tap by tap (kernels/cpu/max_pool_rows.h).
template <typename T, typename I>
void max_pool2d_forward(const T* x, int64_t planes, const PoolPlane& p, T* y, I* indices) {
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  rows_for(planes, in_plane, [&](int64_t plane) {
    max_pool_plane_forward(x + plane * in_plane, p, y + plane * out_plane, indices + plane * out_plane);
  });
}

// dx[plane] = the sum, over the outputs o whose window chose input i (indices[o] == i, i a tap of
// window o), of dy[o]. Scattered per plane into doubles in decreasing o, which is the order
// max_pool_input_grad gathers them in: the same bits, without searching every input's windows.
template <typename T, typename I>
void max_pool2d_backward(const T* dy, const I* indices, int64_t planes, const PoolPlane& p, T* dx) {
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  rows_for(planes, in_plane + 2 * out_plane, [&](int64_t plane) {
    thread_local std::vector<double> grad;
    grad.assign(static_cast<size_t>(in_plane), 0.0);
    const T* g = dy + plane * out_plane;
    const I* chosen = indices + plane * out_plane;
    for (int64_t o = out_plane - 1; o >= 0; --o) {
      const int64_t i = static_cast<int64_t>(chosen[o]);
      if (i < 0 || i >= in_plane || !is_tap_of_window(p, o / p.out_w, o % p.out_w, i)) continue;
      grad[static_cast<size_t>(i)] += static_cast<double>(load(g[o]));
    }
    T* out = dx + plane * in_plane;
    for (int64_t i = 0; i < in_plane; ++i) out[i] = store_double<T>(grad[static_cast<size_t>(i)]);
  });
}

template <typename T>
void avg_pool2d_forward(const T* x, int64_t planes, const PoolPlane& p, bool count_include_pad, T* y) {
  for_each_output(planes, p, [&](int64_t plane, int64_t oh, int64_t ow, int64_t o) {
    y[o] = store_double<T>(
        avg_pool_output<double>(p, count_include_pad, oh, ow, double_loader(x + plane * p.in_h * p.in_w)));
  });
}

template <typename T>
void avg_pool2d_backward(const T* dy, int64_t planes, const PoolPlane& p, bool count_include_pad, T* dx) {
  for_each_input(planes, p, [&](int64_t plane, int64_t h, int64_t w, int64_t i) {
    dx[i] = store_double<T>(
        avg_pool_input_grad<double>(p, count_include_pad, h, w, double_loader(dy + plane * p.out_h * p.out_w)));
  });
}

// x [planes, in_h, in_w] -> y [planes, out_h, out_w], PyTorch's adaptive windows.
template <typename T>
void adaptive_avg_pool2d_forward(const T* x, int64_t planes, const PoolPlane& p, T* y) {
  for_each_output(planes, p, [&](int64_t plane, int64_t oh, int64_t ow, int64_t o) {
    y[o] = store_double<T>(adaptive_avg_pool_output<double>(p, oh, ow, double_loader(x + plane * p.in_h * p.in_w)));
  });
}

template <typename T>
void adaptive_avg_pool2d_backward(const T* dy, int64_t planes, const PoolPlane& p, T* dx) {
  for_each_input(planes, p, [&](int64_t plane, int64_t h, int64_t w, int64_t i) {
    dx[i] =
        store_double<T>(adaptive_avg_pool_input_grad<double>(p, h, w, double_loader(dy + plane * p.out_h * p.out_w)));
  });
}

// y[plane] = the mean of x[plane, 0 .. hw), hw >= 1.
template <typename T>
void global_avg_pool2d_forward(const T* x, int64_t planes, int64_t hw, T* y) {
  rows_for(planes, hw, [&](int64_t plane) {
    double sum = 0.0;
    for (int64_t i = plane * hw; i < (plane + 1) * hw; ++i) sum += static_cast<double>(load(x[i]));
    y[plane] = store_double<T>(sum / static_cast<double>(hw));
  });
}

// dx[plane, i] = dy[plane] / hw, divided in Acc<T> as the CUDA kernel does.
template <typename T>
void global_avg_pool2d_backward(const T* dy, int64_t planes, int64_t hw, T* dx) {
  rows_for(planes, hw, [&](int64_t plane) {
    const T g = store<T>(load(dy[plane]) / static_cast<Acc<T>>(hw));
    for (int64_t i = plane * hw; i < (plane + 1) * hw; ++i) dx[i] = g;
  });
}

}  // namespace baton::kernels::cpu
