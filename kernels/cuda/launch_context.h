// The CUDA stream of the Context a launcher is given (every launcher of kernels/cuda/ takes the
// Context first; it runs under CudaDeviceGuard(ctx.device().index()) and issues work on this stream).
#pragma once

#include <cuda_runtime.h>

#include "runtime/core/context.h"

namespace baton::kernels::cuda {

inline cudaStream_t cuda_stream(const Context& ctx) { return static_cast<cudaStream_t>(ctx.stream().native_handle()); }

}  // namespace baton::kernels::cuda
