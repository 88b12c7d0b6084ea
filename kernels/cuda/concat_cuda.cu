// CUDA strided row copy for the channel concatenation ops: a grid-stride loop over the rows' units,
// where a unit is the widest of 16, 8, 4, 2 or 1 bytes that divides both pointers, both pitches and
// the row length (16-byte vector moves for the usual float tensors with 4 | C_i · d2 · ...).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/concat_cuda.h"
#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/vec.cuh"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

// Pitches and the row length in units of U.
template <typename U>
__global__ void copy_rows_kernel(const U* __restrict__ src, int64_t src_pitch, U* __restrict__ dst, int64_t dst_pitch,
                                 int64_t rows, int64_t row_units) {
  const int64_t total = rows * row_units;
  for (int64_t i = grid_thread(); i < total; i += grid_threads()) {
    const int64_t r = i / row_units, c = i - r * row_units;
    dst[r * dst_pitch + c] = src[r * src_pitch + c];
  }
}

template <typename U>
void launch(const void* src, int64_t src_pitch, void* dst, int64_t dst_pitch, int64_t rows, int64_t row_bytes,
            cudaStream_t stream) {
  constexpr auto kUnit = static_cast<int64_t>(sizeof(U));
  const int64_t row_units = row_bytes / kUnit;
  copy_rows_kernel<U><<<detail::grid_for(rows * row_units), detail::kBlockSize, 0, stream>>>(
      static_cast<const U*>(src), src_pitch / kUnit, static_cast<U*>(dst), dst_pitch / kUnit, rows, row_units);
  BATON_KERNEL_CHECK(stream, "copy_rows_kernel");
}

}  // namespace

void copy_rows(Context& ctx, const void* src, int64_t src_pitch, void* dst, int64_t dst_pitch, int64_t rows,
               int64_t row_bytes) {
  if (rows == 0 || row_bytes == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  const auto stream = cuda_stream(ctx);
  // Every address and length the kernel forms is a multiple of the unit.
  const auto bits = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) |
                    static_cast<uint64_t>(src_pitch | dst_pitch | row_bytes);
  if (bits % 16 == 0) return launch<uint4>(src, src_pitch, dst, dst_pitch, rows, row_bytes, stream);
  if (bits % 8 == 0) return launch<uint2>(src, src_pitch, dst, dst_pitch, rows, row_bytes, stream);
  if (bits % 4 == 0) return launch<uint32_t>(src, src_pitch, dst, dst_pitch, rows, row_bytes, stream);
  if (bits % 2 == 0) return launch<uint16_t>(src, src_pitch, dst, dst_pitch, rows, row_bytes, stream);
  launch<uint8_t>(src, src_pitch, dst, dst_pitch, rows, row_bytes, stream);
}

}  // namespace baton::kernels::cuda
