// CUDA reductions, deterministic: every launch shape depends only on the sizes, each block writes
// its partial result to the workspace, and a second kernel combines the partials in a fixed order
// (no floating-point atomics). Accumulation in float (double for f64).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/cuda/channel_split.cuh"
#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/reduce_cuda.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

constexpr int kThreads = 256;  // every reduction kernel runs with this many threads per block
constexpr int kWarps = kThreads / 32;
// Whole-tensor reductions: about this many elements per thread, at most kMaxPartials blocks.
constexpr int64_t kElementsPerThread = 16;
constexpr int64_t kMaxPartials = 1024;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Sum (of squares when kSquare) and max as (identity, element, combine) over Acc values.
template <typename A, bool kSquare>
struct AddOf {
  __device__ A identity() const { return A(0); }
  __device__ A element(A v) const { return kSquare ? v * v : v; }
  __device__ A combine(A a, A b) const { return a + b; }
};
template <typename A>
struct MaxOf {
  __device__ A identity() const { return -INFINITY; }
  __device__ A element(A v) const { return v; }
  __device__ A combine(A a, A b) const { return a > b || isnan(a) ? a : b; }  // NaN wins
};

// The block's combined value (in thread 0): warp shuffles, then the first warp over the warps'
// results. A fixed tree, so the same inputs give the same bits. Every thread must call it.
template <typename A, typename R>
__device__ A block_reduce(A v, const R& r) {
  __shared__ A warp_values[kWarps];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = r.combine(v, __shfl_down_sync(0xffffffffu, v, offset));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warp_values[lane] : r.identity();
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v = r.combine(v, __shfl_down_sync(0xffffffffu, v, offset));
  }
  __syncthreads();  // warp_values may be reused by the next call
  return v;
}

// partials[block] = the reduction of the block's grid-stride share of x[0, n). With kVector (x
// 16-byte aligned) threads read whole packs, then the n % pack tail element by element.
template <bool kVector, typename T, typename R>
__global__ void reduce_partials_kernel(const T* x, int64_t n, R r, Acc<T>* partials) {
  Acc<T> acc = r.identity();
  int64_t done = 0;
  if constexpr (kVector) {
    constexpr int V = kVecWidth<T>;
    const int64_t packs = n / V;
#pragma unroll 4
    for (int64_t p = grid_thread(); p < packs; p += grid_threads()) {
      const Vec<T, V> pack = load_vec<V>(x + p * V);
#pragma unroll
      for (int k = 0; k < V; ++k) acc = r.combine(acc, r.element(load(pack.v[k])));
    }
    done = packs * V;
  }
  for (int64_t i = done + grid_thread(); i < n; i += grid_threads()) acc = r.combine(acc, r.element(load(x[i])));
  acc = block_reduce(acc, r);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

enum class Finish { none, divide, sqrt };

// *out = finish(the reduction of partials[0, count)), in one block.
template <typename A, typename R>
__global__ void reduce_finish_kernel(const A* partials, int64_t count, R r, Finish finish, int64_t n, A* out) {
  A acc = r.identity();
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) acc = r.combine(acc, partials[i]);
  acc = block_reduce(acc, r);
  if (threadIdx.x == 0) {
    if (finish == Finish::divide) acc = acc / static_cast<A>(n);
    if (finish == Finish::sqrt) acc = sqrt(acc);
    *out = acc;
  }
}

int64_t partial_count(int64_t n) {
  return std::clamp<int64_t>(ceil_div(n, kThreads * kElementsPerThread), 1, kMaxPartials);
}

size_t acc_size(DType dtype) { return dtype == DType::f64 ? sizeof(double) : sizeof(float); }

template <typename T, typename R>
void run_reduce(R r, Finish finish, const T* x, int64_t n, Acc<T>* out, Acc<T>* partials, cudaStream_t s) {
  const int64_t blocks = partial_count(n);
  if (aligned16(x)) {
    reduce_partials_kernel<true><<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(x, n, r, partials);
  } else {
    reduce_partials_kernel<false><<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(x, n, r, partials);
  }
  BATON_KERNEL_CHECK(s, "reduce_partials_kernel");
  reduce_finish_kernel<<<1, kThreads, 0, s>>>(partials, blocks, r, finish, n, out);
  BATON_KERNEL_CHECK(s, "reduce_finish_kernel");
}

// The first pass of a channel reduction (the split of kernels/cuda/channel_split.cuh):
// partials[slice, column] = Σ over the slice's rows of x (· y). Threads walk consecutive columns
// (coalesced for every hw, 1 included).
// With kVector (x, y 16-byte aligned and columns a multiple of the pack size) a work item is a
// group of one pack's columns; otherwise a single column. Rows are added in order.
template <bool kVector, bool kDot, typename T>
__global__ void channel_partials_kernel(const T* x, const T* y, int64_t batch, int64_t columns, ChannelPlan plan,
                                        Acc<T>* partials) {
  using A = Acc<T>;
  constexpr int V = kVector ? kVecWidth<T> : 1;
  const int64_t groups = columns / V;
  const int64_t items = plan.slices * groups;
  for (int64_t item = grid_thread(); item < items; item += grid_threads()) {
    const int64_t slice = item / groups, column = (item - slice * groups) * V;
    const int64_t row_end = (slice + 1) * plan.rows < batch ? (slice + 1) * plan.rows : batch;
    A acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = A(0);
#pragma unroll 4
    for (int64_t row = slice * plan.rows; row < row_end; ++row) {
      const int64_t at = row * columns + column;
      const Vec<T, V> xs = load_vec<V>(x + at);
      if constexpr (kDot) {
        const Vec<T, V> ys = load_vec<V>(y + at);
#pragma unroll
        for (int k = 0; k < V; ++k) acc[k] += load(xs.v[k]) * load(ys.v[k]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) acc[k] += load(xs.v[k]);
      }
    }
#pragma unroll
    for (int k = 0; k < V; ++k) partials[slice * columns + column + k] = acc[k];
  }
}

// The second pass's result: out[c] = the channel's sum.
template <typename A>
struct StoreChannelSum {
  A* out;
  __device__ void operator()(int64_t c, A sum) const { out[c] = sum; }
};

template <bool kDot, typename T>
void run_channel(const T* x, const T* y, int64_t batch, int64_t channels, int64_t hw, Acc<T>* out, Acc<T>* partials,
                 cudaStream_t s) {
  const int64_t columns = channels * hw;
  const ChannelPlan plan = channel_plan(batch, columns);
  constexpr int V = kVecWidth<T>;
  const bool vector = aligned16(x) && aligned16(y) && columns % V == 0;
  const unsigned grid = baton::detail::grid_for(plan.slices * (vector ? columns / V : columns), kThreads);
  if (vector) {
    channel_partials_kernel<true, kDot><<<grid, kThreads, 0, s>>>(x, y, batch, columns, plan, partials);
  } else {
    channel_partials_kernel<false, kDot><<<grid, kThreads, 0, s>>>(x, y, batch, columns, plan, partials);
  }
  BATON_KERNEL_CHECK(s, "channel_partials_kernel");
  launch_channel_finish(partials, plan, channels, hw, StoreChannelSum<Acc<T>>{out}, s);
}

}  // namespace

size_t reduce_workspace_bytes(DType dtype, int64_t n) {
  return static_cast<size_t>(partial_count(n)) * acc_size(dtype);
}

void reduce(Context& ctx, Reduction reduction, DType dtype, const void* x, int64_t n, void* out, void* workspace) {
  CudaDeviceGuard guard(ctx.device().index());
  const auto s = cuda_stream(ctx);
  dispatch_floating("reduce", dtype, [&]<typename T>() {
    using A = Acc<T>;
    const auto* xs = static_cast<const T*>(x);
    auto* result = static_cast<A*>(out);
    auto* partials = static_cast<A*>(workspace);
    switch (reduction) {
      case Reduction::sum:
        return run_reduce(AddOf<A, false>{}, Finish::none, xs, n, result, partials, s);
      case Reduction::mean:
        return run_reduce(AddOf<A, false>{}, Finish::divide, xs, n, result, partials, s);
      case Reduction::max:
        return run_reduce(MaxOf<A>{}, Finish::none, xs, n, result, partials, s);
      case Reduction::sum_squares:
        return run_reduce(AddOf<A, true>{}, Finish::none, xs, n, result, partials, s);
      case Reduction::l2_norm:
        return run_reduce(AddOf<A, true>{}, Finish::sqrt, xs, n, result, partials, s);
    }
  });
}

size_t channel_workspace_bytes(DType dtype, int64_t batch, int64_t channels, int64_t hw) {
  const int64_t columns = channels * hw;
  return static_cast<size_t>(channel_plan(batch, columns).slices * columns) * acc_size(dtype);
}

void channel_reduce(Context& ctx, DType dtype, const void* x, const void* y, int64_t batch, int64_t channels,
                    int64_t hw, void* out, void* workspace) {
  if (channels == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  const auto s = cuda_stream(ctx);
  dispatch_floating("channel_reduce", dtype, [&]<typename T>() {
    using A = Acc<T>;
    const auto* xs = static_cast<const T*>(x);
    const auto* ys = static_cast<const T*>(y);
    if (y == nullptr) {
      run_channel<false>(xs, ys, batch, channels, hw, static_cast<A*>(out), static_cast<A*>(workspace), s);
    } else {
      run_channel<true>(xs, ys, batch, channels, hw, static_cast<A*>(out), static_cast<A*>(workspace), s);
    }
  });
}

}  // namespace baton::kernels::cuda
