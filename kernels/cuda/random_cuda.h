// CUDA launchers of the random fills (kernels/random.h). Plain C++: the raw output pointer, its
// dtype and element count, the Context first (work on its device and stream). Arguments are checked by
// kernels/random.cc (offset + n <= 2^64).
#pragma once

#include <cstdint>

#include "kernels/random_math.h"
#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// out[i] = the value of `distribution` (parameters a, b) at stream index offset + i.
void random_fill(Context& ctx, void* out, DType dtype, int64_t n, Distribution distribution, uint64_t seed,
                 uint64_t offset, double a, double b);

}  // namespace baton::kernels::cuda
