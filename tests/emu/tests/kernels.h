// Kernels of the emulator's own tests (kernels.cu, compiled through the launch rewriter), each
// behind a host function that launches it on `stream` and returns the launch's cudaGetLastError.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace emu_test {

// out[b] = sum of in[b * block .. b * block + block) for each of `blocks` blocks (shared memory,
// __syncthreads and __shfl_down_sync).
cudaError_t block_sums(const float* in, float* out, int blocks, int block, cudaStream_t stream);
// For each thread t of one block of `threads`: the values of the shuffles of value = 1000 + t:
// out[4t..4t+3] = __shfl_sync(src_lane, width), __shfl_up_sync(delta, width), __shfl_down_sync(delta,
// width), __shfl_xor_sync(lane_mask, width), all with the full mask.
cudaError_t shuffles(int* out, int threads, int src_lane, unsigned delta, int lane_mask, int width,
                     cudaStream_t stream);
// out[w] = __ballot_sync(full mask, lane % 3 == 0 || lane == 31) for each warp w of one block.
cudaError_t ballots(unsigned* out, int threads, cudaStream_t stream);
// The threads below `arrive` call __syncthreads, the others exit first.
cudaError_t partial_barrier(int threads, int arrive, cudaStream_t stream);
// Lanes below `arrive` call __shfl_sync with mask `mask`; the others return.
cudaError_t partial_shuffle(unsigned mask, int arrive, cudaStream_t stream);
// Every thread writes its linear index to out[0] with no ordering: the last one to run wins.
cudaError_t last_writer(int* out, int threads, int blocks, cudaStream_t stream);
// out[b] = the bits thread 0 of block b reads from a static __shared__ float before any write;
// then every thread writes it.
cudaError_t shared_before_write(uint32_t* out, int blocks, cudaStream_t stream);
// Dynamic shared memory of `count` floats: out[t] = count - 1 - t read back after a barrier; with
// `overrun`, thread 0 also writes one float past the end.
cudaError_t dynamic_shared(float* out, int count, bool overrun, cudaStream_t stream);
// A launch with the given shape (each thread does nothing); for the launch-limit checks.
cudaError_t empty_launch(dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream);
// out[i] = in[i] for i < n, with the pointers as plain arguments.
cudaError_t copy_kernel(const float* in, float* out, int n, cudaStream_t stream);
// out[i] = source.data[i], the pointer hidden in a struct (not checked at launch).
struct Hidden {
  const float* data;
};
cudaError_t copy_hidden(Hidden source, float* out, int n, cudaStream_t stream);

}  // namespace emu_test
