// CUDA kernels of the deferred batch-norm statistics: per-channel mean and biased variance (one
// block per channel, two passes, fixed reduction tree: the same bits on every run), their pairwise
// merge, and the running-statistics update (elementwise over the channels).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/batch_norm_statistics_cuda.h"
#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "kernels/dispatch.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// The sum of v over the block, returned to every thread: warp shuffles, then the first warp over
// the warps' partial sums.
template <typename A>
__device__ A block_sum(A v) {
  __shared__ A partial[kThreads / 32];
  __shared__ A total;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? partial[lane] : A(0);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) total = v;
  }
  __syncthreads();
  const A result = total;
  __syncthreads();  // partial and total may be reused by the next call
  return result;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    statistics_kernel(const T* __restrict__ x, BatchNormDims d, T* __restrict__ mean, T* __restrict__ var) {
  using A = Acc<T>;
  const int64_t hw = d.h * d.w, per_channel = d.n * hw;
  const A count = static_cast<A>(per_channel);
  for (int64_t c = blockIdx.x; c < d.c; c += gridDim.x) {  // uniform across the block
    A sum = A(0);
    for (int64_t j = threadIdx.x; j < per_channel; j += blockDim.x) {
      const int64_t b = j / hw;
      sum += load(x[(b * d.c + c) * hw + (j - b * hw)]);
    }
    const A mu = block_sum(sum) / count;
    A squares = A(0);
    for (int64_t j = threadIdx.x; j < per_channel; j += blockDim.x) {
      const int64_t b = j / hw;
      const A dev = load(x[(b * d.c + c) * hw + (j - b * hw)]) - mu;
      squares += dev * dev;
    }
    squares = block_sum(squares);
    if (threadIdx.x == 0) {
      mean[c] = store<T>(mu);
      var[c] = store<T>(squares / count);
    }
  }
}

template <typename T>
__global__ void merge_kernel(int64_t channels, double count, T* mean, T* var, double batch_count,
                             const T* __restrict__ batch_mean, const T* __restrict__ batch_var) {
  using A = Acc<T>;
  const A a = static_cast<A>(count), b = static_cast<A>(batch_count), n = a + b;
  for (int64_t c = grid_thread(); c < channels; c += grid_threads()) {
    if (count == 0) {
      mean[c] = batch_mean[c];
      var[c] = batch_var[c];
      continue;
    }
    const A delta = load(batch_mean[c]) - load(mean[c]);
    const A merged = (a * load(var[c]) + b * load(batch_var[c]) + delta * delta * a * b / n) / n;
    mean[c] = store<T>(load(mean[c]) + delta * b / n);
    var[c] = store<T>(merged);
  }
}

template <typename T>
__global__ void commit_kernel(int64_t channels, double count, const T* __restrict__ mean, const T* __restrict__ var,
                              double momentum, T* running_mean, T* running_var) {
  using A = Acc<T>;
  const A m = static_cast<A>(momentum), keep = static_cast<A>(1.0 - momentum), n = static_cast<A>(count);
  for (int64_t c = grid_thread(); c < channels; c += grid_threads()) {
    running_mean[c] = store<T>(keep * load(running_mean[c]) + m * load(mean[c]));
    running_var[c] = store<T>(keep * load(running_var[c]) + m * load(var[c]) * n / (n - A(1)));
  }
}

}  // namespace

void batch_norm_statistics(Context& ctx, DType dtype, const BatchNormDims& dims, const void* x, void* mean, void* var) {
  if (dims.c == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_f32_f64("batch_norm_statistics", dtype, [&]<typename T>() {
    const auto blocks = static_cast<unsigned>(dims.c < detail::kMaxBlocks ? dims.c : detail::kMaxBlocks);
    statistics_kernel<<<blocks, kThreads, 0, s>>>(static_cast<const T*>(x), dims, static_cast<T*>(mean),
                                                  static_cast<T*>(var));
    BATON_KERNEL_CHECK(s, "batch_norm statistics_kernel");
  });
}

void batch_norm_merge_statistics(Context& ctx, DType dtype, int64_t channels, int64_t count, void* mean, void* var,
                                 int64_t batch_count, const void* batch_mean, const void* batch_var) {
  if (channels == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_f32_f64("batch_norm_merge_statistics", dtype, [&]<typename T>() {
    merge_kernel<<<detail::grid_for(channels), detail::kBlockSize, 0, s>>>(
        channels, static_cast<double>(count), static_cast<T*>(mean), static_cast<T*>(var),
        static_cast<double>(batch_count), static_cast<const T*>(batch_mean), static_cast<const T*>(batch_var));
    BATON_KERNEL_CHECK(s, "batch_norm merge_kernel");
  });
}

void batch_norm_commit_statistics(Context& ctx, DType dtype, int64_t channels, int64_t count, const void* mean,
                                  const void* var, double momentum, void* running_mean, void* running_var) {
  if (channels == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_f32_f64("batch_norm_commit_statistics", dtype, [&]<typename T>() {
    commit_kernel<<<detail::grid_for(channels), detail::kBlockSize, 0, s>>>(
        channels, static_cast<double>(count), static_cast<const T*>(mean), static_cast<const T*>(var), momentum,
        static_cast<T*>(running_mean), static_cast<T*>(running_var));
    BATON_KERNEL_CHECK(s, "batch_norm commit_kernel");
  });
}

}  // namespace baton::kernels::cuda
