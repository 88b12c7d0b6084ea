// CUDA launcher of the bias family (kernels/cuda/bias_cuda.cu). Plain C++: the Context first
// (work on its device and stream), raw device pointers, sizes, DType. Arguments are checked by kernels/bias.cc.
#pragma once

#include <cstdint>

#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// out[n, c, i] += bias[c] for out [batch, channels, inner] of `dtype`.
void bias_add(Context& ctx, DType dtype, const void* bias, int64_t batch, int64_t channels, int64_t inner, void* out);

}  // namespace baton::kernels::cuda
