// CUDA launcher of the dropout ops (kernels/dropout.h). Plain C++: the Context first
// (work on its device and stream), then pointers to n elements of `dtype`. Arguments are checked
// by kernels/dropout.cc. `out` may equal `in`.
#pragma once

#include <cstdint>

#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// out[i] = in[i] · scale where (philox::uint32_at(seed, i) >> 8) >= threshold, else +0.
void dropout(Context& ctx, DType dtype, const void* in, uint32_t threshold, double scale, uint64_t seed, void* out,
             int64_t n);

}  // namespace baton::kernels::cuda
