// The grid-stride map of the pointwise op families (elementwise, activation): out[i] = op(in[i]...).
// When every pointer is 16-byte aligned each thread moves chunks of V elements as whole 16-byte
// packs, V = 16 / the smallest element size (kVecWidth of the narrowest type: one pack per chunk
// for it, several for a wider type, as in a cast), and the last n % V elements go through the
// scalar loop; otherwise (a view starting anywhere) the scalar loop does everything. An op that
// needs per-thread set-up (a scalar read from device memory) defines bind(), which each thread
// calls once before its loop to get the functor it applies.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {

// out = factor · x, in the accumulation type (the elementwise scale and the activations' scale by a scalar).
template <typename T>
struct ScaleOp {
  Acc<T> factor;
  __device__ T operator()(T x) const { return store<T>(factor * load(x)); }
};

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
template <bool kVector, int V, typename Op, typename Out, typename... In>
__global__ void pointwise_kernel(int64_t n, Op op, Out* out, const In*... in) {
  const auto f = bind_op(op);
  int64_t done = 0;
  if constexpr (kVector) {
    const int64_t chunks = n / V;
    for (int64_t c = grid_thread(); c < chunks; c += grid_threads()) {
      Vec<Out, V> result;
      [&](const auto&... args) {
#pragma unroll
        for (int k = 0; k < V; ++k) result.v[k] = f(args.v[k]...);
      }(load_vec<V>(in + c * V)...);
      store_vec<V>(out + c * V, result);
    }
    done = chunks * V;
  }
  for (int64_t i = done + grid_thread(); i < n; i += grid_threads()) out[i] = f(in[i]...);
}

// Launches pointwise_kernel on ctx's stream and device (nothing for n == 0).
template <typename Op, typename Out, typename... In>
void launch_pointwise(const char* kernel_name, const Context& ctx, int64_t n, Op op, Out* out, const In*... in) {
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  const auto s = cuda_stream(ctx);
  constexpr int V = std::max({kVecWidth<Out>, kVecWidth<In>...});  // one pack of the narrowest type
  if (aligned16(out) && (aligned16(in) && ...)) {
    pointwise_kernel<true, V><<<detail::grid_for(n / V), detail::kBlockSize, 0, s>>>(n, op, out, in...);
  } else {
    pointwise_kernel<false, V><<<detail::grid_for(n), detail::kBlockSize, 0, s>>>(n, op, out, in...);
  }
  BATON_KERNEL_CHECK(s, kernel_name);
}

}  // namespace baton::kernels::cuda
