// CUDA kernels of the deferred batch-norm statistics: per-channel mean and biased variance (two
// passes, each split over the batch as channel_reduce is: kernels/cuda/channel_split.cuh; fixed
// reduction order, the same bits on every run), their pairwise merge, and the running-statistics
// update (elementwise over the channels).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/batch_norm_statistics_cuda.h"
#include "kernels/cuda/channel_split.cuh"
#include "kernels/cuda/index_divisor.h"
#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "kernels/dispatch.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

// The term of the second statistics pass over x, at element `at` of channel column / hw: (x − mean)²
// with the first pass's mean (divisors of type D: kernels/cuda/index_divisor.h). The first pass sums x
// itself (ElementTerm).
template <typename T, typename D>
struct SquaredDeviationTerm {
  const T* x;
  const T* mean;
  D hw;
  __device__ Acc<T> operator()(int64_t at, int64_t column) const {
    const Acc<T> d = load(x[at]) - load(mean[hw.div(column)]);
    return d * d;
  }
};

// out[c] = sum / count.
template <typename T>
struct StoreMean {
  T* out;
  Acc<T> count;
  __device__ void operator()(int64_t c, Acc<T> sum) const { out[c] = store<T>(sum / count); }
};

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
    using A = Acc<T>;
    const int64_t hw = dims.h * dims.w;
    auto* partials = static_cast<A*>(ctx.workspace(channel_partials_bytes(sizeof(A), dims.n, dims.c, hw)));
    const auto* xs = static_cast<const T*>(x);
    const auto count = static_cast<A>(dims.n * hw);
    // Two passes for accuracy (mean, then squared deviations from it), each split over the batch.
    run_channel_terms(ElementTerm<T>{xs}, StoreMean<T>{static_cast<T*>(mean), count}, dims.n, dims.c, hw, partials, s);
    with_index_divisor(dims.c * hw, [&]<typename D>() {
      run_channel_terms(SquaredDeviationTerm<T, D>{xs, static_cast<const T*>(mean), D(hw)},
                        StoreMean<T>{static_cast<T*>(var), count}, dims.n, dims.c, hw, partials, s);
    });
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
