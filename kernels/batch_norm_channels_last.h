// Batch norm over channels-last activations on the CPU, where kernels/batch_norm.cc's ops send them
// (after their checks): float32 training passes with affine parameters run oneDNN's NHWC primitives;
// every other case goes through row-major copies and the reference. num_batches_tracked is the
// caller's to increment.
#pragma once

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels::channels_last {

void batch_norm_forward_train(Context& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                              double momentum, const Tensor& y, const Tensor& save_mean, const Tensor& save_invstd,
                              const Tensor& running_mean, const Tensor& running_var);
void batch_norm_forward_eval(Context& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias,
                             const Tensor& mean, const Tensor& var, double eps, const Tensor& y);
void batch_norm_backward_train(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& weight,
                               const Tensor& save_mean, const Tensor& save_invstd, double eps, const Tensor& dx,
                               const Tensor& weight_grad, const Tensor& bias_grad);
void batch_norm_backward_eval(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& weight, const Tensor& mean,
                              const Tensor& var, double eps, const Tensor& dx, const Tensor& weight_grad,
                              const Tensor& bias_grad);

}  // namespace baton::kernels::channels_last
