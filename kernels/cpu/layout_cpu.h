// CPU reference for the layout ops (kernels/layout.h): a batched transpose in cache-sized tiles.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"

namespace baton::kernels::cpu {

// out[b, c, r] = in[b, r, c] for in [batches, rows, cols]; E is an unsigned integer of the element size.
template <typename E>
void batched_transpose(const E* in, int64_t batches, int64_t rows, int64_t cols, E* out) {
  constexpr int64_t kTile = 32;
  for (int64_t b = 0; b < batches; ++b) {
    const E* src = in + b * rows * cols;
    E* dst = out + b * rows * cols;
    for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t r_end = std::min(r0 + kTile, rows), c_end = std::min(c0 + kTile, cols);
        for (int64_t r = r0; r < r_end; ++r) {
          for (int64_t c = c0; c < c_end; ++c) dst[c * rows + r] = src[r * cols + c];
        }
      }
    }
  }
}

// The same for elements of `element_size` bytes (1, 2, 4 or 8), moved as unsigned integers.
inline void batched_transpose(const void* in, size_t element_size, int64_t batches, int64_t rows, int64_t cols,
                              void* out) {
  switch (element_size) {
    case 1:
      return batched_transpose(static_cast<const uint8_t*>(in), batches, rows, cols, static_cast<uint8_t*>(out));
    case 2:
      return batched_transpose(static_cast<const uint16_t*>(in), batches, rows, cols, static_cast<uint16_t*>(out));
    case 4:
      return batched_transpose(static_cast<const uint32_t*>(in), batches, rows, cols, static_cast<uint32_t*>(out));
    case 8:
      return batched_transpose(static_cast<const uint64_t*>(in), batches, rows, cols, static_cast<uint64_t*>(out));
    default:
      BATON_FAIL("batched_transpose: unsupported element size ", element_size);
  }
}

}  // namespace baton::kernels::cpu
