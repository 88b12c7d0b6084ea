// CUDA launcher of one_hot (kernels/one_hot.h). Plain C++: raw device pointers, counts, dtypes, the
// Context first (work on its device and stream). Arguments and index values are checked by kernels/one_hot.cc.
#pragma once

#include <cstdint>

#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// out[r, c] = (indices[r] == c) for `rows` indices (i32 or i64) and out [rows, classes] of `dtype`
// (f32, f64, f16 or bf16). An index outside [0, classes) gives a row of zeros (never a write outside out).
void one_hot(Context& ctx, const void* indices, DType index_dtype, int64_t rows, int64_t classes, void* out,
             DType dtype);

}  // namespace baton::kernels::cuda
