// A grid-stride map over arrays of one element type, out[i] = op(in[i]...), for the pointwise op
// families (activation). When every pointer is 16-byte aligned each thread moves whole 16-byte
// vectors (kVecWidth<T> elements) and the last n % kVecWidth<T> elements go through the scalar
// loop; otherwise (a view starting anywhere) the scalar loop does everything. An op that needs
// per-thread set-up (a scalar read from device memory) defines bind(), which each thread calls once
// before its loop to get the functor it applies.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {

template <typename Op>
__device__ __forceinline__ auto bind_op(const Op& op) {
  if constexpr (requires { op.bind(); }) {
    return op.bind();
  } else {
    return op;
  }
}

// No __restrict__: out may be one of the inputs (each element is read before it is written, by
// the same thread).
template <bool kVector, typename T, typename Op, typename... In>
__global__ void pointwise_kernel(int64_t n, Op op, T* out, const In*... in) {
  static_assert((std::is_same_v<T, In> && ...), "pointwise_kernel: one element type");
  constexpr int W = kVecWidth<T>;
  const auto f = bind_op(op);
  int64_t done = 0;
  if constexpr (kVector) {
    const int64_t vectors = n / W;
    for (int64_t v = grid_thread(); v < vectors; v += grid_threads()) {
      Vec<T, W> result;
      [&](const auto&... args) {
#pragma unroll
        for (int k = 0; k < W; ++k) result.v[k] = f(args.v[k]...);
      }(load_vec<W>(in + v * W)...);
      store_vec<W>(out + v * W, result);
    }
    done = vectors * W;
  }
  for (int64_t i = done + grid_thread(); i < n; i += grid_threads()) out[i] = f(in[i]...);
}

// Launches pointwise_kernel on `stream` of device `device_index` (nothing for n == 0).
template <typename T, typename Op, typename... In>
void launch_pointwise(const char* kernel_name, int device_index, void* stream, int64_t n, Op op, T* out,
                      const In*... in) {
  if (n == 0) return;
  CudaDeviceGuard guard(device_index);
  const auto s = static_cast<cudaStream_t>(stream);
  if (aligned16(out) && (aligned16(in) && ...)) {
    pointwise_kernel<true><<<detail::grid_for(n / kVecWidth<T>), detail::kBlockSize, 0, s>>>(n, op, out, in...);
  } else {
    pointwise_kernel<false><<<detail::grid_for(n), detail::kBlockSize, 0, s>>>(n, op, out, in...);
  }
  BATON_KERNEL_CHECK(s, kernel_name);
}

}  // namespace baton::kernels::cuda
