// CUDA batch norm: cuDNN's spatial batch normalisation (CUDNN_BATCHNORM_SPATIAL, not the persistent
// variant) for the training forward, the inference forward and the training backward; baton's own
// kernels for the backward with frozen statistics (cuDNN has none) and the batch counter. cuDNN's
// spatial batch norm is outside the routines its documentation lists as non-deterministic, and the
// own kernels reduce in a fixed order (sums split over the batch, then one block per channel, no
// atomics).
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "kernels/cuda/batch_norm_cuda.h"
#include "kernels/cuda/channel_split.cuh"
#include "kernels/cuda/cudnn_descriptors.h"
#include "kernels/cuda/index_divisor.h"
#include "kernels/cuda/launch_context.h"
#include "kernels/cuda/scalar.cuh"
#include "kernels/cuda/vec.cuh"
#include "kernels/dispatch.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/cudnn_check.h"
#include "runtime/core/cuda/launch.h"

namespace baton::kernels::cuda {
namespace {

constexpr cudnnBatchNormMode_t kMode = CUDNN_BATCHNORM_SPATIAL;

// The descriptors of one batch-norm call: x (also y, dy, dx) as NCHW, and the per-channel tensors
// as cuDNN derives them for spatial mode ([1, C, 1, 1]).
struct BatchNormDescriptors {
  TensorDescriptor x, channel;

  BatchNormDescriptors(DType dtype, const BatchNormDims& d) {
    // cuDNN describes tensors with int sizes and strides.
    BATON_CHECK(d.n * d.c * d.h * d.w <= std::numeric_limits<int>::max(), "batch norm on CUDA: input [", d.n, ", ", d.c,
                ", ", d.h, ", ", d.w, "] has more elements than cuDNN accepts (2^31 - 1); split the batch");
    set_nchw(x, dtype, d.n, d.c, d.h, d.w);
    BATON_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(channel.get(), x.get(), kMode));
  }
};

// The descriptors of (dtype, dims), made on first use and kept for the process: a later call of the
// same shape creates none. Only read once made, so any thread may use them.
std::shared_ptr<const BatchNormDescriptors> descriptors_for(DType dtype, const BatchNormDims& d) {
  using Key = std::tuple<DType, int64_t, int64_t, int64_t, int64_t>;
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const BatchNormDescriptors>> cache;
  const Key key{dtype, d.n, d.c, d.h, d.w};
  const std::lock_guard lock(mutex);
  auto [it, inserted] = cache.try_emplace(key);
  if (inserted) {
    try {
      it->second = std::make_shared<const BatchNormDescriptors>(dtype, d);
    } catch (...) {
      cache.erase(it);
      throw;
    }
  }
  return it->second;
}

// cudnnBatchNormalizationForwardTraining with descriptors made beforehand.
void forward_train(cudnnHandle_t handle, const BatchNormDescriptors& desc, const BatchNormForwardTrainArgs& a) {
  const ScalingFactor one(a.dtype, 1.0), zero(a.dtype, 0.0);
  BATON_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
      handle, kMode, one.get(), zero.get(), desc.x.get(), a.x, desc.x.get(), a.y, desc.channel.get(), a.weight, a.bias,
      a.momentum, a.running_mean, a.running_var, a.eps, a.save_mean, a.save_invstd));
}

// cudnnBatchNormalizationBackward with descriptors made beforehand: dx = 1·dx_computed + 0·dx;
// param grads = 1·computed + (1 or 0)·prior.
void backward_train(cudnnHandle_t handle, const BatchNormDescriptors& desc, const BatchNormBackwardTrainArgs& a) {
  const ScalingFactor one(a.dtype, 1.0), zero(a.dtype, 0.0);
  BATON_CUDNN_CHECK(cudnnBatchNormalizationBackward(
      handle, kMode, one.get(), zero.get(), one.get(), a.accumulate_param_grads ? one.get() : zero.get(), desc.x.get(),
      a.x, desc.x.get(), a.dy, desc.x.get(), a.dx, desc.channel.get(), a.weight, a.weight_grad, a.bias_grad, a.eps,
      a.save_mean, a.save_invstd));
}

// A cuDNN pass run now, or bound (bare) to its descriptors; both with the cached descriptors.
template <typename Args>
using Pass = void (*)(cudnnHandle_t, const BatchNormDescriptors&, const Args&);

template <typename Args>
void run_pass(Pass<Args> pass, Context& ctx, const Args& args) {
  CudaDeviceGuard guard(ctx.device().index());
  pass(ctx.cudnn(), *descriptors_for(args.dtype, args.dims), args);
}

template <typename Args>
std::function<void()> bare_pass(Pass<Args> pass, Context& ctx, const Args& args) {
  CudaDeviceGuard guard(ctx.device().index());
  cudnnHandle_t handle = ctx.cudnn();
  auto desc = descriptors_for(args.dtype, args.dims);
  // The handle belongs to ctx's device: each call makes that device current, whatever the calling
  // thread has current.
  return [pass, device = ctx.device().index(), handle, desc, args] {
    CudaDeviceGuard call_guard(device);
    pass(handle, *desc, args);
  };
}

// The term of the frozen-statistics weight gradient at element `at` of channel column / hw (divisors
// of type D): dy·(x − mean). The bias gradient's term is dy itself (ElementTerm).
template <typename T, typename D>
struct GradTimesDeviationTerm {
  const T* dy;
  const T* x;
  const T* mean;
  D hw;
  __device__ Acc<T> operator()(int64_t at, int64_t column) const {
    return load(dy[at]) * (load(x[at]) - load(mean[hw.div(column)]));
  }
};

// bias_grad[c] += Σ dy.
template <typename T>
struct AddBiasGrad {
  T* bias_grad;
  __device__ void operator()(int64_t c, Acc<T> sum) const { bias_grad[c] = store<T>(load(bias_grad[c]) + sum); }
};

// weight_grad[c] += invstd·Σ dy·(x − mean), invstd = 1/sqrt(var + eps).
template <typename T>
struct AddWeightGrad {
  T* weight_grad;
  const T* var;
  Acc<T> eps;
  __device__ void operator()(int64_t c, Acc<T> sum) const {
    const Acc<T> invstd = Acc<T>(1) / sqrt(load(var[c]) + eps);
    weight_grad[c] = store<T>(load(weight_grad[c]) + sum * invstd);
  }
};

// dx = dy·γ[c]/sqrt(var[c] + eps) over n elements of NCHW (channel c = (i / hw) % channels), W
// elements per access (W = 1: scalar accesses).
template <int W, typename T, typename D>
__global__ void frozen_dx_kernel(const T* __restrict__ dy, const T* __restrict__ weight, const T* __restrict__ var,
                                 Acc<T> eps, int64_t n, ChannelOf<D> channel_of, T* __restrict__ dx) {
  using A = Acc<T>;
  const auto scaled = [&](T g, int64_t i) {
    const int64_t c = channel_of(i);
    const A gamma = weight != nullptr ? load(weight[c]) : A(1);
    return store<T>(load(g) * (gamma / sqrt(load(var[c]) + eps)));
  };
  const int64_t packs = n / W;
  for (int64_t pack = grid_thread(); pack < packs; pack += grid_threads()) {
    Vec<T, W> v = load_vec<W>(dy + pack * W);
#pragma unroll
    for (int k = 0; k < W; ++k) v.v[k] = scaled(v.v[k], pack * W + k);
    store_vec<W>(dx + pack * W, v);
  }
  for (int64_t i = packs * W + grid_thread(); i < n; i += grid_threads()) dx[i] = scaled(dy[i], i);
}

__global__ void increment_kernel(int64_t* counter) { *counter += 1; }

}  // namespace

void batch_norm_forward_train(Context& ctx, const BatchNormForwardTrainArgs& args) {
  run_pass(forward_train, ctx, args);
}

std::function<void()> batch_norm_forward_train_call(Context& ctx, const BatchNormForwardTrainArgs& args) {
  return bare_pass(forward_train, ctx, args);
}

void batch_norm_forward_eval(Context& ctx, DType dtype, const BatchNormDims& dims, const void* x, const void* weight,
                             const void* bias, const void* mean, const void* var, double eps, void* y) {
  CudaDeviceGuard guard(ctx.device().index());
  cudnnHandle_t handle = ctx.cudnn();
  const std::shared_ptr<const BatchNormDescriptors> desc = descriptors_for(dtype, dims);
  const ScalingFactor one(dtype, 1.0), zero(dtype, 0.0);
  BATON_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(handle, kMode, one.get(), zero.get(), desc->x.get(), x,
                                                            desc->x.get(), y, desc->channel.get(), weight, bias, mean,
                                                            var, eps));
}

void batch_norm_backward_train(Context& ctx, const BatchNormBackwardTrainArgs& args) {
  run_pass(backward_train, ctx, args);
}

std::function<void()> batch_norm_backward_train_call(Context& ctx, const BatchNormBackwardTrainArgs& args) {
  return bare_pass(backward_train, ctx, args);
}

void batch_norm_backward_eval(Context& ctx, DType dtype, const BatchNormDims& dims, const void* x, const void* dy,
                              const void* weight, const void* mean, const void* var, double eps, void* dx,
                              void* weight_grad, void* bias_grad) {
  const int64_t n = dims.n * dims.c * dims.h * dims.w;
  if (n == 0) return;
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  dispatch_f32_f64("batch_norm_backward_eval", dtype, [&]<typename T>() {
    const auto e = static_cast<Acc<T>>(eps);
    // The parameter gradients: per-channel sums split over the batch (kernels/cuda/channel_split.cuh),
    // partials in the context's workspace (one at a time: stream order makes the reuse safe).
    const int64_t hw = dims.h * dims.w;
    using A = Acc<T>;
    A* partials = nullptr;
    if (weight_grad != nullptr || bias_grad != nullptr) {
      partials = static_cast<A*>(ctx.workspace(channel_partials_bytes(sizeof(A), dims.n, dims.c, hw)));
    }
    const auto* dys = static_cast<const T*>(dy);
    if (bias_grad != nullptr) {
      run_channel_terms(ElementTerm<T>{dys}, AddBiasGrad<T>{static_cast<T*>(bias_grad)}, dims.n, dims.c, hw, partials,
                        s);
    }
    if (weight_grad != nullptr) {
      with_index_divisor(dims.c * hw, [&]<typename D>() {
        run_channel_terms(
            GradTimesDeviationTerm<T, D>{dys, static_cast<const T*>(x), static_cast<const T*>(mean), D(hw)},
            AddWeightGrad<T>{static_cast<T*>(weight_grad), static_cast<const T*>(var), e}, dims.n, dims.c, hw, partials,
            s);
      });
    }
    if (dx == nullptr) return;
    const auto* g = static_cast<const T*>(dy);
    auto* out = static_cast<T*>(dx);
    with_index_divisor(n, [&]<typename D>() {
      const ChannelOf<D> channel_of(dims.h * dims.w, dims.c);
      if (aligned16(g) && aligned16(out)) {
        constexpr int W = kVecWidth<T>;
        frozen_dx_kernel<W><<<detail::grid_for(n / W + 1), detail::kBlockSize, 0, s>>>(
            g, static_cast<const T*>(weight), static_cast<const T*>(var), e, n, channel_of, out);
      } else {
        frozen_dx_kernel<1><<<detail::grid_for(n), detail::kBlockSize, 0, s>>>(
            g, static_cast<const T*>(weight), static_cast<const T*>(var), e, n, channel_of, out);
      }
    });
    BATON_KERNEL_CHECK(s, "frozen_dx_kernel");
  });
}

void increment_counter(Context& ctx, int64_t* counter) {
  CudaDeviceGuard guard(ctx.device().index());
  auto s = cuda_stream(ctx);
  increment_kernel<<<1, 1, 0, s>>>(counter);
  BATON_KERNEL_CHECK(s, "increment_kernel");
}

}  // namespace baton::kernels::cuda
