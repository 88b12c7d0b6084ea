// CUDA one_hot: a grid-stride loop over the rows x classes outputs, each thread writing one value
// (1 where the column is the row's index, 0 elsewhere), so every output is written exactly once.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/one_hot_cuda.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "kernels/dispatch.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

template <typename T, typename I>
__global__ void one_hot_kernel(const I* __restrict__ indices, int64_t rows, int64_t classes, T* __restrict__ out) {
  const int64_t total = rows * classes;
  const T one = store<T>(static_cast<Acc<T>>(1)), zero = store<T>(static_cast<Acc<T>>(0));
  for (int64_t i = grid_thread(); i < total; i += grid_threads()) {
    const int64_t r = i / classes, c = i - r * classes;
    out[i] = static_cast<int64_t>(indices[r]) == c ? one : zero;
  }
}

}  // namespace

void one_hot(Context& ctx, const void* indices, DType index_dtype, int64_t rows, int64_t classes, void* out,
             DType dtype) {
  if (rows == 0 || classes == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  const auto stream = cuda_stream(ctx);
  dispatch_floating("one_hot", dtype, [&]<typename T>() {
    dispatch_labels(index_dtype, [&]<typename I>() {
      one_hot_kernel<T, I><<<baton::detail::grid_for(rows * classes), baton::detail::kBlockSize, 0, stream>>>(
          static_cast<const I*>(indices), rows, classes, static_cast<T*>(out));
      BATON_KERNEL_CHECK(stream, "one_hot_kernel");
    });
  });
}

}  // namespace baton::kernels::cuda
