// The two-pass split of per-channel reductions over [batch, channels, hw] data (channel_reduce, the
// batch-norm statistics and the frozen-statistics parameter gradients): the first pass sees the data
// as a [batch, columns] matrix (columns = channels·hw) and cuts the batch into `slices` runs of rows,
// so many blocks share a channel however few channels there are; the second runs one block per
// channel over its slices·hw partials. Launch shapes depend only on the sizes and the second pass
// adds in a fixed tree: the same inputs give the same bits.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {

inline constexpr int kChannelThreads = 256;  // threads per block of both passes
// About this many (row slice, column) work items in the first pass, each covering at least
// kMinRowsPerSlice rows of the batch.
inline constexpr int64_t kChannelTargetItems = int64_t{1} << 20;
inline constexpr int64_t kMinRowsPerSlice = 32;

struct ChannelPlan {
  int64_t slices = 1;
  int64_t rows = 1;
};

inline ChannelPlan channel_plan(int64_t batch, int64_t columns) {
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  ChannelPlan plan;
  const int64_t wanted = columns > 0 ? ceil_div(kChannelTargetItems, columns) : 1;
  plan.slices = std::clamp<int64_t>(wanted, 1, std::max<int64_t>(1, ceil_div(batch, kMinRowsPerSlice)));
  plan.rows = std::max<int64_t>(1, ceil_div(batch, plan.slices));
  plan.slices = std::max<int64_t>(1, ceil_div(batch, plan.rows));
  return plan;
}

// Bytes of the first pass's partials for accumulators of `acc_bytes` bytes.
inline size_t channel_partials_bytes(size_t acc_bytes, int64_t batch, int64_t channels, int64_t hw) {
  return static_cast<size_t>(channel_plan(batch, channels * hw).slices * channels * hw) * acc_bytes;
}

// The sum of v over the block (valid in thread 0): warp shuffles, then the first warp over the
// warps' sums. A fixed tree. Every thread of the block calls it.
template <typename A>
__device__ A channel_block_sum(A v) {
  constexpr int kWarps = kChannelThreads / 32;
  __shared__ A warp_sums[kWarps];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warp_sums[lane] : A(0);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  __syncthreads();  // warp_sums may be reused by the next call
  return v;
}

// First pass over terms: partials[slice, column] = Σ over the slice's rows, in order, of
// term(row·columns + column, column). Threads walk consecutive columns (coalesced).
template <typename A, typename Term>
__global__ void channel_term_partials_kernel(Term term, int64_t batch, int64_t columns, ChannelPlan plan, A* partials) {
  const int64_t items = plan.slices * columns;
  for (int64_t item = grid_thread(); item < items; item += grid_threads()) {
    const int64_t slice = item / columns, column = item - slice * columns;
    const int64_t row_end = (slice + 1) * plan.rows < batch ? (slice + 1) * plan.rows : batch;
    A acc = A(0);
    for (int64_t row = slice * plan.rows; row < row_end; ++row) acc += term(row * columns + column, column);
    partials[slice * columns + column] = acc;
  }
}

// Second pass: finish(c, Σ over slices s and i < hw of partials[s, c·hw + i]), called by thread 0 of
// the block of channel c.
template <typename A, typename Finish>
__global__ void channel_finish_kernel(const A* partials, int64_t slices, int64_t channels, int64_t hw, Finish finish) {
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {  // uniform across the block
    A acc = A(0);
    for (int64_t i = threadIdx.x; i < slices * hw; i += blockDim.x) {
      const int64_t slice = i / hw, j = i - slice * hw;
      acc += partials[(slice * channels + c) * hw + j];
    }
    acc = channel_block_sum(acc);
    if (threadIdx.x == 0) finish(c, acc);
  }
}

// The second pass on stream s, after a first pass that wrote `partials` with `plan`.
template <typename A, typename Finish>
void launch_channel_finish(const A* partials, const ChannelPlan& plan, int64_t channels, int64_t hw, Finish finish,
                           cudaStream_t s) {
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(channels, baton::detail::kMaxBlocks));
  channel_finish_kernel<<<blocks, kChannelThreads, 0, s>>>(partials, plan.slices, channels, hw, finish);
  BATON_KERNEL_CHECK(s, "channel_finish_kernel");
}

// Both passes over terms on stream s: finish(c, Σ over b < batch, i < hw of term(at, column)) with
// column = c·hw + i and at = b·channels·hw + column. `partials` holds channel_partials_bytes.
template <typename A, typename Term, typename Finish>
void run_channel_terms(Term term, Finish finish, int64_t batch, int64_t channels, int64_t hw, A* partials,
                       cudaStream_t s) {
  const int64_t columns = channels * hw;
  const ChannelPlan plan = channel_plan(batch, columns);
  channel_term_partials_kernel<<<baton::detail::grid_for(plan.slices * columns, kChannelThreads), kChannelThreads, 0,
                                 s>>>(term, batch, columns, plan, partials);
  BATON_KERNEL_CHECK(s, "channel_term_partials_kernel");
  launch_channel_finish(partials, plan, channels, hw, finish, s);
}

// The term that is the element itself: term(at, column) = data[at], in Acc<T> (the sum of x, or of dy).
template <typename T>
struct ElementTerm {
  const T* data;
  __device__ Acc<T> operator()(int64_t at, int64_t) const { return load(data[at]); }
};

}  // namespace baton::kernels::cuda
