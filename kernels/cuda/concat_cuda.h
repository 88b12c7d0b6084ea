// CUDA launcher of the channel concatenation ops (kernels/concat.h). Plain C++: the Context first
// (work on its device and stream), raw device pointers and byte counts. Arguments are
// checked by kernels/concat.cc; source and destination do not overlap.
#pragma once

#include <cstdint>

#include "runtime/core/context.h"

namespace baton::kernels::cuda {

// rows times: row_bytes bytes from src to dst, then src += src_pitch and dst += dst_pitch (bytes).
void copy_rows(Context& ctx, const void* src, int64_t src_pitch, void* dst, int64_t dst_pitch, int64_t rows,
               int64_t row_bytes);

}  // namespace baton::kernels::cuda
