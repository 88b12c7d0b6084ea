// Internal: filling memory with a repeated element bit pattern, and element <-> double conversion.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/core/stream.h"

namespace baton::detail {

// The bit pattern of `value` converted to `dtype` (in the low dtype_size(dtype) bytes).
uint64_t element_bits(double value, DType dtype);
// The value of one element stored at `bytes`.
double element_value(const void* bytes, DType dtype);
// Writes `count` elements of `element_size` bytes (1, 2, 4 or 8), each `pattern`, ordered on `stream`.
void fill_pattern(void* dst, Device device, int64_t count, size_t element_size, uint64_t pattern, const Stream& stream);

}  // namespace baton::detail
