// CUDA fill: writes a repeated 1/2/4/8-byte pattern. The bulk is written as 16-byte words when the
// pointer is 16-byte aligned (a 16-byte word holds 16/size copies of the pattern); a scalar pass
// writes the head and tail.
#include <cuda_runtime.h>

#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/fill.h"
#include "runtime/core/cuda/launch.h"

namespace baton::detail {
namespace {

template <typename T>
__global__ void fill_scalar_kernel(T* dst, int64_t count, T value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = value;
  }
}

__global__ void fill_vector_kernel(uint4* dst, int64_t count, uint4 value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = value;
  }
}

template <typename T>
void fill_typed(void* dst, int64_t count, uint64_t pattern, cudaStream_t stream) {
  T value;
  memcpy(&value, &pattern, sizeof(T));
  char* bytes = static_cast<char*>(dst);
  // Scalar head up to 16-byte alignment, 16-byte body, scalar tail.
  const uintptr_t address = reinterpret_cast<uintptr_t>(bytes);
  int64_t head = static_cast<int64_t>(((16 - address % 16) % 16) / sizeof(T));
  if (address % sizeof(T) != 0) head = count;  // misaligned for T (cannot happen for tensors): scalar only
  head = head < count ? head : count;
  const int64_t per_word = static_cast<int64_t>(16 / sizeof(T));
  const int64_t words = (count - head) / per_word;
  const int64_t tail_start = head + words * per_word;
  if (head > 0) {
    fill_scalar_kernel<<<grid_for(head), kBlockSize, 0, stream>>>(reinterpret_cast<T*>(bytes), head, value);
    BATON_KERNEL_CHECK(stream, "fill_scalar_kernel");
  }
  if (words > 0) {
    uint4 word;
    T* lanes = reinterpret_cast<T*>(&word);
    for (int64_t i = 0; i < per_word; ++i) lanes[i] = value;
    fill_vector_kernel<<<grid_for(words), kBlockSize, 0, stream>>>(reinterpret_cast<uint4*>(bytes + head * sizeof(T)),
                                                                   words, word);
    BATON_KERNEL_CHECK(stream, "fill_vector_kernel");
  }
  if (tail_start < count) {
    fill_scalar_kernel<<<grid_for(count - tail_start), kBlockSize, 0, stream>>>(
        reinterpret_cast<T*>(bytes) + tail_start, count - tail_start, value);
    BATON_KERNEL_CHECK(stream, "fill_scalar_kernel");
  }
}

}  // namespace

void cuda_fill_pattern(void* dst, int device_index, int64_t count, size_t element_size, uint64_t pattern,
                       void* cuda_stream) {
  CudaDeviceGuard guard(device_index);
  auto stream = static_cast<cudaStream_t>(cuda_stream);
  switch (element_size) {
    case 1:
      return fill_typed<uint8_t>(dst, count, pattern, stream);
    case 2:
      return fill_typed<uint16_t>(dst, count, pattern, stream);
    case 4:
      return fill_typed<uint32_t>(dst, count, pattern, stream);
    case 8:
      return fill_typed<uint64_t>(dst, count, pattern, stream);
    default:
      BATON_FAIL("fill: unsupported element size ", element_size);
  }
}

}  // namespace baton::detail
