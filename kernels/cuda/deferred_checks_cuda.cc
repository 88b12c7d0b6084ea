// Reading a context's device-check record back to the host, ordered on its stream.
#include "kernels/cuda/deferred_checks_cuda.h"

#include <cuda_runtime.h>

#include "kernels/cuda/launch_context.h"
#include "runtime/core/cuda/cuda_check.h"

namespace baton::kernels::cuda {

void copy_and_reset_record(Context& ctx, void* record, void* host, size_t bytes) {
  CudaDeviceGuard guard(ctx.device().index());
  auto stream = cuda_stream(ctx);
  BATON_CUDA_CHECK(cudaMemcpyAsync(host, record, bytes, cudaMemcpyDeviceToHost, stream));
  BATON_CUDA_CHECK(cudaMemsetAsync(record, 0, bytes, stream));
}

}  // namespace baton::kernels::cuda
