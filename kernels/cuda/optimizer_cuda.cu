// CUDA optimizer kernels: one grid-stride pass applying the shared per-element update
// (kernels/optimizer_math.h) to params, grads and state. Each thread moves W elements of every
// buffer per step with 16-byte loads and stores when all buffers are 16-byte aligned (W = 1, plain
// scalar accesses, otherwise); a scalar tail covers the last n % W elements.
#include <cuda_runtime.h>

#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/optimizer_cuda.h"
#include "kernels/cuda/vec.cuh"
#include "kernels/dispatch.h"
#include "kernels/optimizer_math.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

// The buffers of one fused update, in the order of kernels/optimizer_math.h (the gradient is only read).
template <typename T, int K>
struct Buffers {
  T* ptr[K];
};

template <int W, typename T, int K, typename Update>
__global__ void fused_update_kernel(Buffers<T, K> buffers, int64_t n, Update update) {
  const int64_t packs = n / W;
  for (int64_t pack = grid_thread(); pack < packs; pack += grid_threads()) {
    const int64_t first = pack * W;
    Vec<T, W> vec[K];
#pragma unroll
    for (int b = 0; b < K; ++b) vec[b] = load_vec<W>(buffers.ptr[b] + first);
#pragma unroll
    for (int j = 0; j < W; ++j) {
      T v[Update::kSlots] = {};
#pragma unroll
      for (int b = 0; b < K; ++b) v[b] = vec[b].v[j];
      update(v);
#pragma unroll
      for (int b = 0; b < K; ++b) vec[b].v[j] = v[b];
    }
#pragma unroll
    for (int b = 0; b < K; ++b) {
      if (b != kGradBuffer) store_vec<W>(buffers.ptr[b] + first, vec[b]);
    }
  }
  for (int64_t i = packs * W + grid_thread(); i < n; i += grid_threads()) {
    T v[Update::kSlots] = {};
#pragma unroll
    for (int b = 0; b < K; ++b) v[b] = buffers.ptr[b][i];
    update(v);
#pragma unroll
    for (int b = 0; b < K; ++b) {
      if (b != kGradBuffer) buffers.ptr[b][i] = v[b];
    }
  }
}

template <typename T, int K, typename Update>
void launch_fused_update(const Buffers<T, K>& buffers, int64_t n, const Update& update, cudaStream_t stream) {
  static_assert(K <= Update::kSlots);
  bool vectorised = true;
  for (T* p : buffers.ptr) vectorised = vectorised && aligned16(p);
  if (vectorised) {
    constexpr int W = kVecWidth<T>;
    fused_update_kernel<W><<<detail::grid_for(n / W + 1), detail::kBlockSize, 0, stream>>>(buffers, n, update);
  } else {
    fused_update_kernel<1><<<detail::grid_for(n), detail::kBlockSize, 0, stream>>>(buffers, n, update);
  }
  BATON_KERNEL_CHECK(stream, "fused_update_kernel");
}

}  // namespace

void sgd_step(Context& ctx, void* params, const void* grads, void* momentum_buf, DType dtype, int64_t n,
              const SgdParams& p) {
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto stream = cuda_stream(ctx);
  dispatch_f32_f64("sgd_step", dtype, [&]<typename T>() {
    const SgdUpdate<T> update = make_sgd_update<T>(p);
    auto* param = static_cast<T*>(params);
    auto* grad = static_cast<T*>(const_cast<void*>(grads));  // read only (kGradBuffer)
    if (update.has_momentum) {
      launch_fused_update(Buffers<T, 3>{{param, grad, static_cast<T*>(momentum_buf)}}, n, update, stream);
    } else {
      launch_fused_update(Buffers<T, 2>{{param, grad}}, n, update, stream);
    }
  });
}

void adamw_step(Context& ctx, void* params, const void* grads, void* exp_avg, void* exp_avg_sq, DType dtype, int64_t n,
                const AdamWParams& p) {
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto stream = cuda_stream(ctx);
  dispatch_f32_f64("adamw_step", dtype, [&]<typename T>() {
    auto* grad = static_cast<T*>(const_cast<void*>(grads));  // read only (kGradBuffer)
    launch_fused_update(
        Buffers<T, 4>{{static_cast<T*>(params), grad, static_cast<T*>(exp_avg), static_cast<T*>(exp_avg_sq)}}, n,
        make_adamw_update<T>(p), stream);
  });
}

}  // namespace baton::kernels::cuda
