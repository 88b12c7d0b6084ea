// Launch-shape helpers shared by baton's CUDA kernels (grid-stride loops over n elements).
#pragma once

#include <cstdint>

namespace baton::detail {

inline constexpr int kBlockSize = 256;
// Enough blocks to fill any current GPU several times over; grid-stride loops cover the rest.
inline constexpr int64_t kMaxBlocks = 132 * 32;

inline unsigned grid_for(int64_t n, int block = kBlockSize) {
  int64_t blocks = (n + block - 1) / block;
  if (blocks < 1) blocks = 1;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return static_cast<unsigned>(blocks);
}

}  // namespace baton::detail
