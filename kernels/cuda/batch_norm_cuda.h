// CUDA launchers of the batch-norm ops (kernels/cuda/batch_norm_cuda.cu). Plain C++: device pointers
// to elements of `dtype` (f32 or f64), x laid out as NCHW `dims`, per-channel tensors of dims.c
// elements. The cuDNN launchers run on the stream `handle` is bound to (Context::cudnn); the others
// take the cudaStream_t as void*. Arguments are checked by kernels/batch_norm.cc, which also
// supplies every pointer the cuDNN calls need (ones / zeros for an absent γ / β, scratch for
// unwanted outputs) from Context::workspace.
#pragma once

#include <cstdint>

#include "runtime/core/dtype.h"

struct cudnnContext;  // cudnnHandle_t is cudnnContext*

namespace baton::kernels::cuda {

struct BatchNormDims {
  int64_t n = 0, c = 0, h = 0, w = 0;
};

// cudnnBatchNormalizationForwardTraining (CUDNN_BATCHNORM_SPATIAL): y, save_mean, save_invstd; the
// running statistics are updated with factor `momentum` when both are non-null.
void batch_norm_forward_train(cudnnContext* handle, DType dtype, const BatchNormDims& dims, const void* x,
                              const void* weight, const void* bias, double eps, double momentum, void* y,
                              void* save_mean, void* save_invstd, void* running_mean, void* running_var,
                              int device_index);

// cudnnBatchNormalizationForwardInference: y from the given mean and variance.
void batch_norm_forward_eval(cudnnContext* handle, DType dtype, const BatchNormDims& dims, const void* x,
                             const void* weight, const void* bias, const void* mean, const void* var, double eps,
                             void* y, int device_index);

// cudnnBatchNormalizationBackward: dx written; weight_grad and bias_grad added to
// (accumulate_param_grads: cuDNN's betaParamDiff = 1) or overwritten.
void batch_norm_backward_train(cudnnContext* handle, DType dtype, const BatchNormDims& dims, const void* x,
                               const void* dy, const void* weight, const void* save_mean, const void* save_invstd,
                               double eps, void* dx, void* weight_grad, void* bias_grad, bool accumulate_param_grads,
                               int device_index);

// Frozen statistics, baton's kernels: dx = dy·γ·invstd (skipped when dx is null); weight_grad +=
// Σ dy·(x − mean)·invstd and bias_grad += Σ dy (skipped when null; one block per channel, fixed
// reduction order). weight null: γ = 1.
void batch_norm_backward_eval(DType dtype, const BatchNormDims& dims, const void* x, const void* dy, const void* weight,
                              const void* mean, const void* var, double eps, void* dx, void* weight_grad,
                              void* bias_grad, int device_index, void* stream);

// *counter += 1 (an i64 on the device).
void increment_counter(int64_t* counter, int device_index, void* stream);

}  // namespace baton::kernels::cuda
