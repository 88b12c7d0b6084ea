// CUDA dropout kernel: each thread takes one Philox block (four 32-bit numbers: elements 4b .. 4b + 3)
// and writes those elements with one vector load and store when both arrays are aligned to four
// elements, element by element at the tail or otherwise.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/dropout_cuda.h"
#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "kernels/dropout_math.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"
#include "runtime/core/philox.h"

namespace baton::kernels::cuda {
namespace {

// No __restrict__: out may be in (each element is read before it is written, by the same thread).
template <bool kVector, typename T>
__global__ void dropout_kernel(const T* in, T* out, int64_t n, uint64_t seed, uint32_t threshold, Acc<T> scale) {
  const int64_t blocks = (n + kDropoutLanes - 1) / kDropoutLanes;
  for (int64_t b = grid_thread(); b < blocks; b += grid_threads()) {
    const philox::Block bits = philox::block_at(seed, static_cast<uint64_t>(b));
    const int64_t base = b * kDropoutLanes;
    if (kVector && base + kDropoutLanes <= n) {
      Vec<T, kDropoutLanes> v = load_vec<kDropoutLanes>(in + base);
#pragma unroll
      for (int j = 0; j < kDropoutLanes; ++j) {
        v.v[j] = store<T>(dropout_value(load(v.v[j]), dropout_keeps(bits.v[j], threshold), scale));
      }
      store_vec<kDropoutLanes>(out + base, v);
    } else {
      for (int j = 0; j < kDropoutLanes && base + j < n; ++j) {
        out[base + j] = store<T>(dropout_value(load(in[base + j]), dropout_keeps(bits.v[j], threshold), scale));
      }
    }
  }
}

}  // namespace

void dropout(Context& ctx, DType dtype, const void* in, uint32_t threshold, double scale, uint64_t seed, void* out,
             int64_t n) {
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  const auto stream = cuda_stream(ctx);
  const unsigned grid = detail::grid_for((n + kDropoutLanes - 1) / kDropoutLanes);
  dispatch_floating("dropout", dtype, [&]<typename T>() {
    const auto* src = static_cast<const T*>(in);
    auto* dst = static_cast<T*>(out);
    const auto s = static_cast<Acc<T>>(scale);
    constexpr uintptr_t kVecBytes = sizeof(Vec<T, kDropoutLanes>);
    if (reinterpret_cast<uintptr_t>(src) % kVecBytes == 0 && reinterpret_cast<uintptr_t>(dst) % kVecBytes == 0) {
      dropout_kernel<true><<<grid, detail::kBlockSize, 0, stream>>>(src, dst, n, seed, threshold, s);
    } else {
      dropout_kernel<false><<<grid, detail::kBlockSize, 0, stream>>>(src, dst, n, seed, threshold, s);
    }
    BATON_KERNEL_CHECK(stream, "dropout_kernel");
  });
}

}  // namespace baton::kernels::cuda
