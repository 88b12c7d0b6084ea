// CUDA launchers of the batch-norm ops (kernels/cuda/batch_norm_cuda.cu). Plain C++: the Context
// first (its device and stream; the cuDNN launchers use its cuDNN handle, bound to that stream),
// device pointers to elements of `dtype` (f32 or f64), x laid out as NCHW `dims`, per-channel
// tensors of dims.c elements. Arguments are checked by kernels/batch_norm.cc, which also
// supplies every pointer the cuDNN calls need (ones / zeros for an absent γ / β, scratch for
// unwanted outputs) from Context::workspace.
#pragma once

#include <cstdint>
#include <functional>

#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

struct BatchNormDims {
  int64_t n = 0, c = 0, h = 0, w = 0;
};

// The arguments of cudnnBatchNormalizationForwardTraining (CUDNN_BATCHNORM_SPATIAL): y, save_mean
// and save_invstd written; the running statistics updated with factor `momentum` when both are
// non-null.
struct BatchNormForwardTrainArgs {
  DType dtype = DType::f32;
  BatchNormDims dims;
  const void* x = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  double eps = 0;
  double momentum = 0;
  void* y = nullptr;
  void* save_mean = nullptr;
  void* save_invstd = nullptr;
  void* running_mean = nullptr;
  void* running_var = nullptr;
};

// The arguments of cudnnBatchNormalizationBackward: dx written; weight_grad and bias_grad added to
// (accumulate_param_grads: cuDNN's betaParamDiff = 1) or overwritten.
struct BatchNormBackwardTrainArgs {
  DType dtype = DType::f32;
  BatchNormDims dims;
  const void* x = nullptr;
  const void* dy = nullptr;
  const void* weight = nullptr;
  const void* save_mean = nullptr;
  const void* save_invstd = nullptr;
  double eps = 0;
  void* dx = nullptr;
  void* weight_grad = nullptr;
  void* bias_grad = nullptr;
  bool accumulate_param_grads = true;
};

// The cuDNN calls. The descriptors of a (dtype, dims) are made on its first call and cached for the
// process.
void batch_norm_forward_train(Context& ctx, const BatchNormForwardTrainArgs& args);
void batch_norm_backward_train(Context& ctx, const BatchNormBackwardTrainArgs& args);

// The same calls, bare: the cached descriptors bound now, each call of the result issues only the cuDNN call
// (kernels::batch_norm_library_call). The pointers must stay valid while the result is used.
std::function<void()> batch_norm_forward_train_call(Context& ctx, const BatchNormForwardTrainArgs& args);
std::function<void()> batch_norm_backward_train_call(Context& ctx, const BatchNormBackwardTrainArgs& args);

// cudnnBatchNormalizationForwardInference: y from the given mean and variance.
void batch_norm_forward_eval(Context& ctx, DType dtype, const BatchNormDims& dims, const void* x, const void* weight,
                             const void* bias, const void* mean, const void* var, double eps, void* y);

// Frozen statistics, baton's kernels: dx = dy·γ·invstd (skipped when dx is null); weight_grad +=
// Σ dy·(x − mean)·invstd and bias_grad += Σ dy (skipped when null; sums split over the batch, fixed
// reduction order, partials in ctx.workspace()). weight null: γ = 1.
void batch_norm_backward_eval(Context& ctx, DType dtype, const BatchNormDims& dims, const void* x, const void* dy,
                              const void* weight, const void* mean, const void* var, double eps, void* dx,
                              void* weight_grad, void* bias_grad);

// *counter += 1 (an i64 on the device).
void increment_counter(Context& ctx, int64_t* counter);

}  // namespace baton::kernels::cuda
