// Internal: the CUDA fill kernel's launcher (memory-bound, grid-stride).
#pragma once

#include <cstddef>
#include <cstdint>

namespace baton::detail {

void cuda_fill_pattern(void* dst, int device_index, int64_t count, size_t element_size, uint64_t pattern,
                       void* cuda_stream);

}  // namespace baton::detail
