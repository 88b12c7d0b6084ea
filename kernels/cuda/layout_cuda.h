// CUDA launcher of the layout ops (kernels/layout.h). Plain C++: raw device pointers, the element
// size (1, 2, 4 or 8 bytes), the device index and the cudaStream_t as void*. Arguments are checked
// by kernels/layout.cc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace baton::kernels::cuda {

// out[b, c, r] = in[b, r, c] for in [batches, rows, cols].
void batched_transpose(const void* in, size_t element_size, int64_t batches, int64_t rows, int64_t cols, void* out,
                       int device_index, void* stream);

}  // namespace baton::kernels::cuda
