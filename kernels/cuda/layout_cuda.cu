// CUDA layout kernel: a batched transpose through 32 x 32 tiles in shared memory (one padding column
// against bank conflicts). A block of 32 x 8 threads reads a tile along the input's rows and writes
// it along the output's rows, so both global accesses are coalesced. Grid: x over column tiles, y
// over row tiles, z over the batch, each grid-stride so any size fits the grid limits.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/layout_cuda.h"
#include "runtime/core/cuda/cuda_check.h"

namespace baton::kernels::cuda {
namespace {

constexpr int kTile = 32;
constexpr int kTileRowsPerPass = 8;  // blockDim.y
constexpr int64_t kMaxGridX = int64_t{1} << 20;
constexpr int64_t kMaxGridYZ = 65535;

template <typename E>
__global__ void __launch_bounds__(kTile* kTileRowsPerPass)
    batched_transpose_kernel(const E* __restrict__ in, int64_t batches, int64_t rows, int64_t cols,
                             E* __restrict__ out) {
  __shared__ E tile[kTile][kTile + 1];
  const int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  for (int64_t b = blockIdx.z; b < batches; b += gridDim.z) {
    const E* src = in + b * rows * cols;
    E* dst = out + b * rows * cols;
    for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {
      for (int64_t ct = blockIdx.x; ct < col_tiles; ct += gridDim.x) {
        const int64_t r0 = rt * kTile, c0 = ct * kTile;
        for (int i = threadIdx.y; i < kTile; i += kTileRowsPerPass) {
          const int64_t r = r0 + i, c = c0 + threadIdx.x;
          if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * cols + c];
        }
        __syncthreads();
        for (int i = threadIdx.y; i < kTile; i += kTileRowsPerPass) {
          const int64_t c = c0 + i, r = r0 + threadIdx.x;
          if (c < cols && r < rows) dst[c * rows + r] = tile[threadIdx.x][i];
        }
        __syncthreads();  // the tile is read before the next one overwrites it
      }
    }
  }
}

template <typename E>
void launch_transpose(const void* in, int64_t batches, int64_t rows, int64_t cols, void* out, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(std::min((cols + kTile - 1) / kTile, kMaxGridX)),
                  static_cast<unsigned>(std::min((rows + kTile - 1) / kTile, kMaxGridYZ)),
                  static_cast<unsigned>(std::min(batches, kMaxGridYZ)));
  batched_transpose_kernel<E><<<grid, dim3(kTile, kTileRowsPerPass), 0, stream>>>(static_cast<const E*>(in), batches,
                                                                                  rows, cols, static_cast<E*>(out));
  BATON_KERNEL_CHECK(stream, "batched_transpose_kernel");
}

}  // namespace

void batched_transpose(Context& ctx, const void* in, size_t element_size, int64_t batches, int64_t rows, int64_t cols,
                       void* out) {
  if (batches == 0 || rows == 0 || cols == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto stream = cuda_stream(ctx);
  switch (element_size) {
    case 1:
      return launch_transpose<uint8_t>(in, batches, rows, cols, out, stream);
    case 2:
      return launch_transpose<uint16_t>(in, batches, rows, cols, out, stream);
    case 4:
      return launch_transpose<uint32_t>(in, batches, rows, cols, out, stream);
    case 8:
      return launch_transpose<uint64_t>(in, batches, rows, cols, out, stream);
    default:
      BATON_FAIL("batched_transpose: unsupported element size ", element_size);
  }
}

}  // namespace baton::kernels::cuda
