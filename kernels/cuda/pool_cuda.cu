// CUDA pooling kernels. Windowed ops run one thread per output element (forward) or per input
// element (backward, a gather over the covering windows with the formulas of kernels/pool_math.h),
// in grid-stride loops (adaptive average pooling too); window reads are scattered, so no vector
// accesses there. Global average
// pooling runs one warp per plane (shuffle tree, fixed order); its backward broadcast writes 16-byte
// packs when dx is aligned. Every result is the same bits on every run.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/index_divisor.h"
#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/pool_cuda.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "kernels/pool_math.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

// Element i of dx [planes, in_h, in_w] as (plane, h, w), by divisors of type D (32-bit fast division
// below 2^31 elements: kernels/cuda/index_divisor.h).
template <typename D>
struct InputPosition {
  D plane_div, row_div;
  int64_t in_size, in_w;
  explicit InputPosition(const PoolPlane& p)
      : plane_div(p.in_h * p.in_w), row_div(p.in_w), in_size(p.in_h * p.in_w), in_w(p.in_w) {}
  __device__ void operator()(int64_t i, int64_t& plane, int64_t& h, int64_t& w) const {
    plane = plane_div.div(i);
    const int64_t r = i - plane * in_size;
    h = row_div.div(r);
    w = r - h * in_w;
  }
};

template <typename T, typename I>
__global__ void max_pool_forward_kernel(const T* __restrict__ x, int64_t planes, PoolPlane p, T* __restrict__ y,
                                        I* __restrict__ indices) {
  const int64_t in_size = p.in_h * p.in_w, out_size = p.out_h * p.out_w;
  for (int64_t o = grid_thread(); o < planes * out_size; o += grid_threads()) {
    const int64_t plane = o / out_size, r = o - plane * out_size, oh = r / p.out_w, ow = r - oh * p.out_w;
    const T* xp = x + plane * in_size;
    int64_t index = -1;
    const Acc<T> best = max_pool_window<Acc<T>>(
        p, oh, ow, [xp](int64_t i) { return load(xp[i]); }, index);
    y[o] = store<T>(best);
    indices[o] = static_cast<I>(index);
  }
}

template <typename T, typename I, typename D>
__global__ void max_pool_backward_kernel(const T* __restrict__ dy, const I* __restrict__ indices, int64_t planes,
                                         PoolPlane p, InputPosition<D> at, T* __restrict__ dx) {
  const int64_t in_size = p.in_h * p.in_w, out_size = p.out_h * p.out_w;
  for (int64_t i = grid_thread(); i < planes * in_size; i += grid_threads()) {
    int64_t plane, h, w;
    at(i, plane, h, w);
    const T* gp = dy + plane * out_size;
    const I* ip = indices + plane * out_size;
    dx[i] = store<T>(max_pool_input_grad<Acc<T>>(
        p, h, w, [gp](int64_t o) { return load(gp[o]); }, [ip](int64_t o) { return static_cast<int64_t>(ip[o]); }));
  }
}

template <typename T>
__global__ void avg_pool_forward_kernel(const T* __restrict__ x, int64_t planes, PoolPlane p, bool count_include_pad,
                                        T* __restrict__ y) {
  const int64_t in_size = p.in_h * p.in_w, out_size = p.out_h * p.out_w;
  for (int64_t o = grid_thread(); o < planes * out_size; o += grid_threads()) {
    const int64_t plane = o / out_size, r = o - plane * out_size, oh = r / p.out_w, ow = r - oh * p.out_w;
    const T* xp = x + plane * in_size;
    y[o] = store<T>(avg_pool_output<Acc<T>>(p, count_include_pad, oh, ow, [xp](int64_t i) { return load(xp[i]); }));
  }
}

template <typename T, typename D>
__global__ void avg_pool_backward_kernel(const T* __restrict__ dy, int64_t planes, PoolPlane p, bool count_include_pad,
                                         InputPosition<D> at, T* __restrict__ dx) {
  const int64_t in_size = p.in_h * p.in_w, out_size = p.out_h * p.out_w;
  for (int64_t i = grid_thread(); i < planes * in_size; i += grid_threads()) {
    int64_t plane, h, w;
    at(i, plane, h, w);
    const T* gp = dy + plane * out_size;
    dx[i] = store<T>(avg_pool_input_grad<Acc<T>>(p, count_include_pad, h, w, [gp](int64_t o) { return load(gp[o]); }));
  }
}

template <typename T>
__global__ void adaptive_avg_forward_kernel(const T* __restrict__ x, int64_t planes, PoolPlane p, T* __restrict__ y) {
  const int64_t in_size = p.in_h * p.in_w, out_size = p.out_h * p.out_w;
  for (int64_t o = grid_thread(); o < planes * out_size; o += grid_threads()) {
    const int64_t plane = o / out_size, r = o - plane * out_size, oh = r / p.out_w, ow = r - oh * p.out_w;
    const T* xp = x + plane * in_size;
    y[o] = store<T>(adaptive_avg_pool_output<Acc<T>>(p, oh, ow, [xp](int64_t i) { return load(xp[i]); }));
  }
}

template <typename T, typename D>
__global__ void adaptive_avg_backward_kernel(const T* __restrict__ dy, int64_t planes, PoolPlane p, InputPosition<D> at,
                                             T* __restrict__ dx) {
  const int64_t in_size = p.in_h * p.in_w, out_size = p.out_h * p.out_w;
  for (int64_t i = grid_thread(); i < planes * in_size; i += grid_threads()) {
    int64_t plane, h, w;
    at(i, plane, h, w);
    const T* gp = dy + plane * out_size;
    dx[i] = store<T>(adaptive_avg_pool_input_grad<Acc<T>>(p, h, w, [gp](int64_t o) { return load(gp[o]); }));
  }
}

// One warp per plane: lanes add strided elements, then a shuffle tree (fixed order).
template <typename T>
__global__ void global_avg_forward_kernel(const T* __restrict__ x, int64_t planes, int64_t hw, T* __restrict__ y) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (int64_t plane = grid_thread() / 32; plane < planes; plane += grid_threads() / 32) {  // uniform per warp
    Acc<T> acc = Acc<T>(0);
    for (int64_t i = lane; i < hw; i += 32) acc += load(x[plane * hw + i]);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (lane == 0) y[plane] = store<T>(acc / static_cast<Acc<T>>(hw));
  }
}

// dx[i] = dy[i / hw] / hw; W elements per store (W = 1: scalar stores).
template <int W, typename T, typename D>
__global__ void global_avg_backward_kernel(const T* __restrict__ dy, int64_t n, int64_t hw, D plane_of,
                                           T* __restrict__ dx) {
  const Acc<T> divisor = static_cast<Acc<T>>(hw);
  const int64_t packs = n / W;
  for (int64_t pack = grid_thread(); pack < packs; pack += grid_threads()) {
    Vec<T, W> v;
#pragma unroll
    for (int k = 0; k < W; ++k) v.v[k] = store<T>(load(dy[plane_of.div(pack * W + k)]) / divisor);
    store_vec<W>(dx + pack * W, v);
  }
  for (int64_t i = packs * W + grid_thread(); i < n; i += grid_threads())
    dx[i] = store<T>(load(dy[plane_of.div(i)]) / divisor);
}

// Calls fn.template operator()<I>() with I the C++ type of an index dtype (i32 or i64, checked before).
template <typename Fn>
void dispatch_index(DType index_dtype, Fn&& fn) {
  if (index_dtype == DType::i32) return fn.template operator()<int32_t>();
  return fn.template operator()<int64_t>();
}

}  // namespace

void max_pool2d_forward(Context& ctx, DType dtype, DType index_dtype, const void* x, int64_t planes,
                        const PoolPlane& plane, void* y, void* indices) {
  const int64_t n = planes * plane.out_h * plane.out_w;
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_floating("max_pool2d_forward", dtype, [&]<typename T>() {
    dispatch_index(index_dtype, [&]<typename I>() {
      max_pool_forward_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, s>>>(
          static_cast<const T*>(x), planes, plane, static_cast<T*>(y), static_cast<I*>(indices));
      BATON_KERNEL_CHECK(s, "max_pool_forward_kernel");
    });
  });
}

void max_pool2d_backward(Context& ctx, DType dtype, DType index_dtype, const void* dy, const void* indices,
                         int64_t planes, const PoolPlane& plane, void* dx) {
  const int64_t n = planes * plane.in_h * plane.in_w;
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_floating("max_pool2d_backward", dtype, [&]<typename T>() {
    dispatch_index(index_dtype, [&]<typename I>() {
      with_index_divisor(n, [&]<typename D>() {
        max_pool_backward_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, s>>>(
            static_cast<const T*>(dy), static_cast<const I*>(indices), planes, plane, InputPosition<D>(plane),
            static_cast<T*>(dx));
      });
      BATON_KERNEL_CHECK(s, "max_pool_backward_kernel");
    });
  });
}

void avg_pool2d_forward(Context& ctx, DType dtype, const void* x, int64_t planes, const PoolPlane& plane,
                        bool count_include_pad, void* y) {
  const int64_t n = planes * plane.out_h * plane.out_w;
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_floating("avg_pool2d_forward", dtype, [&]<typename T>() {
    avg_pool_forward_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, s>>>(static_cast<const T*>(x), planes, plane,
                                                                               count_include_pad, static_cast<T*>(y));
    BATON_KERNEL_CHECK(s, "avg_pool_forward_kernel");
  });
}

void avg_pool2d_backward(Context& ctx, DType dtype, const void* dy, int64_t planes, const PoolPlane& plane,
                         bool count_include_pad, void* dx) {
  const int64_t n = planes * plane.in_h * plane.in_w;
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_floating("avg_pool2d_backward", dtype, [&]<typename T>() {
    with_index_divisor(n, [&]<typename D>() {
      avg_pool_backward_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, s>>>(
          static_cast<const T*>(dy), planes, plane, count_include_pad, InputPosition<D>(plane), static_cast<T*>(dx));
    });
    BATON_KERNEL_CHECK(s, "avg_pool_backward_kernel");
  });
}

void global_avg_pool2d_forward(Context& ctx, DType dtype, const void* x, int64_t planes, int64_t hw, void* y) {
  if (planes == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_floating("global_avg_pool2d_forward", dtype, [&]<typename T>() {
    global_avg_forward_kernel<<<detail::grid_for(planes * 32), detail::kBlockSize, 0, s>>>(
        static_cast<const T*>(x), planes, hw, static_cast<T*>(y));
    BATON_KERNEL_CHECK(s, "global_avg_forward_kernel");
  });
}

void global_avg_pool2d_backward(Context& ctx, DType dtype, const void* dy, int64_t planes, int64_t hw, void* dx) {
  const int64_t n = planes * hw;
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_floating("global_avg_pool2d_backward", dtype, [&]<typename T>() {
    with_index_divisor(n, [&]<typename D>() {
      if (aligned16(dx)) {
        constexpr int W = kVecWidth<T>;
        global_avg_backward_kernel<W><<<detail::grid_for(n / W + 1), detail::kBlockSize, 0, s>>>(
            static_cast<const T*>(dy), n, hw, D(hw), static_cast<T*>(dx));
      } else {
        global_avg_backward_kernel<1><<<detail::grid_for(n), detail::kBlockSize, 0, s>>>(
            static_cast<const T*>(dy), n, hw, D(hw), static_cast<T*>(dx));
      }
    });
    BATON_KERNEL_CHECK(s, "global_avg_backward_kernel");
  });
}

void adaptive_avg_pool2d_forward(Context& ctx, DType dtype, const void* x, int64_t planes, const PoolPlane& plane,
                                 void* y) {
  const int64_t n = planes * plane.out_h * plane.out_w;
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_floating("adaptive_avg_pool2d_forward", dtype, [&]<typename T>() {
    adaptive_avg_forward_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, s>>>(static_cast<const T*>(x), planes,
                                                                                   plane, static_cast<T*>(y));
    BATON_KERNEL_CHECK(s, "adaptive_avg_forward_kernel");
  });
}

void adaptive_avg_pool2d_backward(Context& ctx, DType dtype, const void* dy, int64_t planes, const PoolPlane& plane,
                                  void* dx) {
  const int64_t n = planes * plane.in_h * plane.in_w;
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_floating("adaptive_avg_pool2d_backward", dtype, [&]<typename T>() {
    with_index_divisor(n, [&]<typename D>() {
      adaptive_avg_backward_kernel<<<detail::grid_for(n), detail::kBlockSize, 0, s>>>(
          static_cast<const T*>(dy), planes, plane, InputPosition<D>(plane), static_cast<T*>(dx));
    });
    BATON_KERNEL_CHECK(s, "adaptive_avg_backward_kernel");
  });
}

}  // namespace baton::kernels::cuda
