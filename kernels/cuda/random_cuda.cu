// CUDA random fills: each thread computes one Philox block (four 32-bit numbers: stream indices
// 4b .. 4b + 3) and writes the elements of the fill among them, with one vector store when all four
// are inside the fill and their address is aligned to the vector, element by element at the edges.
// Normal numbers come from philox::normal_at per lane: the block's Philox rounds are recomputed per
// lane unless the compiler merges them (the double-precision log / sin / cos dominate anyway), which
// keeps the one definition of the Box-Muller transform shared with the CPU.
#include <cuda_runtime.h>

#include <type_traits>

#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/random_cuda.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "kernels/random_math.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

constexpr int kLanes = 4;  // numbers per Philox block

// out[i] for stream indices offset .. last (last = offset + n - 1, so no overflow for fills that end at 2^64).
// Uniform: a = low, b = range. Normal: a = mean, b = stddev.
template <typename T, bool kNormal>
__global__ void random_kernel(T* __restrict__ out, uint64_t offset, uint64_t last, uint64_t seed, double a, double b) {
  constexpr bool wide = std::is_same_v<T, double>;
  const uint64_t first_block = offset / kLanes;
  const uint64_t blocks = last / kLanes - first_block + 1;
  for (uint64_t k = static_cast<uint64_t>(grid_thread()); k < blocks; k += static_cast<uint64_t>(grid_threads())) {
    const uint64_t block = first_block + k;
    const uint64_t base = block * kLanes;  // the stream index of lane 0
    Vec<T, kLanes> v;
    if constexpr (kNormal) {
#pragma unroll
      for (int j = 0; j < kLanes; ++j) v.v[j] = store<T>(static_cast<Acc<T>>(normal_value(seed, base | j, a, b)));
    } else {
      const philox::Block bits = philox::block_at(seed, block);
#pragma unroll
      for (int j = 0; j < kLanes; ++j) v.v[j] = store<T>(static_cast<Acc<T>>(uniform_value(bits.v[j], wide, a, b)));
    }
    const bool inside = base >= offset && base + (kLanes - 1) <= last;  // all four lanes are in the fill
    if (inside && reinterpret_cast<uintptr_t>(out + (base - offset)) % sizeof(v) == 0) {
      store_vec<kLanes>(out + (base - offset), v);
    } else {
#pragma unroll
      for (int j = 0; j < kLanes; ++j) {
        const uint64_t index = base + j;
        if (index >= offset && index <= last) out[index - offset] = v.v[j];
      }
    }
  }
}

}  // namespace

void random_fill(Context& ctx, void* out, DType dtype, int64_t n, Distribution distribution, uint64_t seed,
                 uint64_t offset, double a, double b) {
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto stream = cuda_stream(ctx);
  const uint64_t last = offset + static_cast<uint64_t>(n - 1);
  const unsigned grid = detail::grid_for(static_cast<int64_t>(last / kLanes - offset / kLanes + 1));
  dispatch_floating("random_fill", dtype, [&]<typename T>() {
    auto* dst = static_cast<T*>(out);
    if (distribution == Distribution::uniform) {
      random_kernel<T, false><<<grid, detail::kBlockSize, 0, stream>>>(dst, offset, last, seed, a, b);
    } else {
      random_kernel<T, true><<<grid, detail::kBlockSize, 0, stream>>>(dst, offset, last, seed, a, b);
    }
    BATON_KERNEL_CHECK(stream, "random_kernel");
  });
}

}  // namespace baton::kernels::cuda
