// CPU reference of the channel concatenation ops (kernels/concat.h): a strided copy of rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace baton::kernels::cpu {

// rows times: row_bytes bytes from src to dst, then src += src_pitch and dst += dst_pitch (bytes).
inline void copy_rows(const void* src, int64_t src_pitch, void* dst, int64_t dst_pitch, int64_t rows,
                      int64_t row_bytes) {
  if (row_bytes == 0) return;
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(d + r * dst_pitch, s + r * src_pitch, static_cast<size_t>(row_bytes));
  }
}

}  // namespace baton::kernels::cpu
