// CUDA launcher of the dropout ops (kernels/dropout.h). Plain C++: pointers to n elements of
// `dtype` on device `device_index`, work issued on `stream` (a cudaStream_t). Arguments are checked
// by kernels/dropout.cc. `out` may equal `in`.
#pragma once

#include <cstdint>

#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// out[i] = in[i] · scale where (philox::uint32_at(seed, i) >> 8) >= threshold, else +0.
void dropout(DType dtype, const void* in, uint32_t threshold, double scale, uint64_t seed, void* out, int64_t n,
             int device_index, void* stream);

}  // namespace baton::kernels::cuda
