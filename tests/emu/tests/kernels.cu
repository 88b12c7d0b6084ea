// Kernels of the emulator's own tests (see kernels.h).
#include "kernels.h"

namespace emu_test {
namespace {

__global__ void block_sums_kernel(const float* in, float* out) {
  __shared__ float warp_totals[32];
  const int t = static_cast<int>(threadIdx.x);
  float v = in[blockIdx.x * blockDim.x + t];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (t % 32 == 0) warp_totals[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    v = t < static_cast<int>(blockDim.x / 32) ? warp_totals[t] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (t == 0) out[blockIdx.x] = v;
  }
}

__global__ void shuffles_kernel(int* out, int src_lane, unsigned delta, int lane_mask, int width) {
  const int t = static_cast<int>(threadIdx.x);
  const int value = 1000 + t;
  out[4 * t + 0] = __shfl_sync(0xffffffffu, value, src_lane, width);
  out[4 * t + 1] = __shfl_up_sync(0xffffffffu, value, delta, width);
  out[4 * t + 2] = __shfl_down_sync(0xffffffffu, value, delta, width);
  out[4 * t + 3] = __shfl_xor_sync(0xffffffffu, value, lane_mask, width);
}

__global__ void ballots_kernel(unsigned* out) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const unsigned bits = __ballot_sync(0xffffffffu, lane % 3 == 0 || lane == 31);
  if (lane == 0) out[threadIdx.x / 32] = bits;
}

__global__ void partial_barrier_kernel(int arrive) {
  if (static_cast<int>(threadIdx.x) >= arrive) return;
  __syncthreads();
}

__global__ void partial_shuffle_kernel(unsigned mask, int arrive) {
  if (static_cast<int>(threadIdx.x) >= arrive) return;
  (void)__shfl_sync(mask, 1, 0);
}

__global__ void last_writer_kernel(int* out) { out[0] = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); }

__global__ void shared_before_write_kernel(uint32_t* out) {
  __shared__ float value;
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<uint32_t>(__float_as_int(value));
  __syncthreads();
  value = static_cast<float>(blockIdx.x);
}

__global__ void dynamic_shared_kernel(float* out, int count, bool overrun) {
  extern __shared__ float values[];
  const int t = static_cast<int>(threadIdx.x);
  values[t] = static_cast<float>(t);
  if (overrun && t == 0) values[count] = 1.0f;
  __syncthreads();
  out[t] = values[count - 1 - t];
}

__global__ void empty_kernel() {}

__global__ void copy_kernel_body(const float* in, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = in[i];
}

__global__ void copy_hidden_kernel(Hidden source, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = source.data[i];
}

}  // namespace

cudaError_t block_sums(const float* in, float* out, int blocks, int block, cudaStream_t stream) {
  block_sums_kernel<<<blocks, block, 0, stream>>>(in, out);
  return cudaGetLastError();
}

cudaError_t shuffles(int* out, int threads, int src_lane, unsigned delta, int lane_mask, int width,
                     cudaStream_t stream) {
  shuffles_kernel<<<1, threads, 0, stream>>>(out, src_lane, delta, lane_mask, width);
  return cudaGetLastError();
}

cudaError_t ballots(unsigned* out, int threads, cudaStream_t stream) {
  ballots_kernel<<<1, threads, 0, stream>>>(out);
  return cudaGetLastError();
}

cudaError_t partial_barrier(int threads, int arrive, cudaStream_t stream) {
  partial_barrier_kernel<<<1, threads, 0, stream>>>(arrive);
  return cudaGetLastError();
}

cudaError_t partial_shuffle(unsigned mask, int arrive, cudaStream_t stream) {
  partial_shuffle_kernel<<<1, 32, 0, stream>>>(mask, arrive);
  return cudaGetLastError();
}

cudaError_t last_writer(int* out, int threads, int blocks, cudaStream_t stream) {
  last_writer_kernel<<<blocks, threads, 0, stream>>>(out);
  return cudaGetLastError();
}

cudaError_t shared_before_write(uint32_t* out, int blocks, cudaStream_t stream) {
  shared_before_write_kernel<<<blocks, 64, 0, stream>>>(out);
  return cudaGetLastError();
}

cudaError_t dynamic_shared(float* out, int count, bool overrun, cudaStream_t stream) {
  dynamic_shared_kernel<<<1, count, count * sizeof(float), stream>>>(out, count, overrun);
  return cudaGetLastError();
}

cudaError_t empty_launch(dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream) {
  empty_kernel<<<grid, block, shared_bytes, stream>>>();
  return cudaGetLastError();
}

cudaError_t copy_kernel(const float* in, float* out, int n, cudaStream_t stream) {
  copy_kernel_body<<<(n + 127) / 128, 128, 0, stream>>>(in, out, n);
  return cudaGetLastError();
}

cudaError_t copy_hidden(Hidden source, float* out, int n, cudaStream_t stream) {
  copy_hidden_kernel<<<(n + 127) / 128, 128, 0, stream>>>(source, out, n);
  return cudaGetLastError();
}

}  // namespace emu_test
