// CUDA launcher of the channel concatenation ops (kernels/concat.h). Plain C++: raw device pointers
// and byte counts on device `device_index`, work issued on `stream` (a cudaStream_t). Arguments are
// checked by kernels/concat.cc; source and destination do not overlap.
#pragma once

#include <cstdint>

namespace baton::kernels::cuda {

// rows times: row_bytes bytes from src to dst, then src += src_pitch and dst += dst_pitch (bytes).
void copy_rows(const void* src, int64_t src_pitch, void* dst, int64_t dst_pitch, int64_t rows, int64_t row_bytes,
               int device_index, void* stream);

}  // namespace baton::kernels::cuda
