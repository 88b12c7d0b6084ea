// CUDA launcher of the layout ops (kernels/layout.h). Plain C++: raw device pointers, the element
// size (1, 2, 4 or 8 bytes), the Context first (work on its device and stream). Arguments are checked
// by kernels/layout.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/context.h"

namespace baton::kernels::cuda {

// out[b, c, r] = in[b, r, c] for in [batches, rows, cols].
void batched_transpose(Context& ctx, const void* in, size_t element_size, int64_t batches, int64_t rows, int64_t cols,
                       void* out);

}  // namespace baton::kernels::cuda
