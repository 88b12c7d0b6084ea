// CUDA bias add: a grid-stride loop over out [batch, channels, inner]. When out is 16-byte aligned
// and inner is a multiple of the pack size, each thread moves whole 16-byte packs (a pack never
// straddles two channels, so one channel index per pack); otherwise one element at a time. The
// channel of an index is found by 32-bit fast division below 2^31 elements (kernels/cuda/index_divisor.h).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/bias_cuda.h"
#include "kernels/cuda/index_divisor.h"
#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

using baton::detail::grid_for;
using baton::detail::kBlockSize;

template <bool kVector, typename T, typename D>
__global__ void bias_add_kernel(const T* __restrict__ bias, ChannelOf<D> channel_of, int64_t n, T* __restrict__ out) {
  const int64_t stride = grid_threads();
  const int64_t first = grid_thread();
  if constexpr (kVector) {
    constexpr int V = kVecWidth<T>;
    for (int64_t p = first; p < n / V; p += stride) {
      const Acc<T> b = load(bias[channel_of(p * V)]);
      Vec<T, V> pack = load_vec<V>(out + p * V);
#pragma unroll
      for (int k = 0; k < V; ++k) pack.v[k] = store<T>(load(pack.v[k]) + b);
      store_vec<V>(out + p * V, pack);
    }
  } else {
    for (int64_t i = first; i < n; i += stride) out[i] = store<T>(load(out[i]) + load(bias[channel_of(i)]));
  }
}

}  // namespace

void bias_add(Context& ctx, DType dtype, const void* bias, int64_t batch, int64_t channels, int64_t inner, void* out) {
  const int64_t n = batch * channels * inner;
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  const auto s = cuda_stream(ctx);
  dispatch_floating("bias_add", dtype, [&]<typename T>() {
    with_index_divisor(n, [&]<typename D>() {
      const auto* b = static_cast<const T*>(bias);
      auto* o = static_cast<T*>(out);
      const ChannelOf<D> channel_of(inner, channels);
      if (aligned16(out) && inner % kVecWidth<T> == 0) {
        bias_add_kernel<true, T><<<grid_for(n / kVecWidth<T>), kBlockSize, 0, s>>>(b, channel_of, n, o);
      } else {
        bias_add_kernel<false, T><<<grid_for(n), kBlockSize, 0, s>>>(b, channel_of, n, o);
      }
      BATON_KERNEL_CHECK(s, "bias_add_kernel");
    });
  });
}

}  // namespace baton::kernels::cuda
