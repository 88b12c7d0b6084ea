// CUDA launcher of the bias family (kernels/cuda/bias_cuda.cu). Plain C++: raw device pointers,
// sizes, DType, device index and the cudaStream_t as void*. Arguments are checked by kernels/bias.cc.
#pragma once

#include <cstdint>

#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// out[n, c, i] += bias[c] for out [batch, channels, inner] of `dtype`.
void bias_add(DType dtype, const void* bias, int64_t batch, int64_t channels, int64_t inner, void* out,
              int device_index, void* stream);

}  // namespace baton::kernels::cuda
