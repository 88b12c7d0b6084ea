// Batch normalisation over NCHW tensors (torch.nn.functional.batch_norm semantics): statistics per
// channel over N, H and W.
//
// x, y, dy and dx are [N, C, H, W], f32 or f64 (f16 and bf16 are errors naming the dtype); every
// per-channel tensor (weight γ, bias β, means, variances, inverse standard deviations, their
// gradients) is [C] of the same dtype. weight and bias may be undefined tensors: γ = 1, β = 0
// (affine=False). The CPU computes statistics in double (two passes: mean, then squared
// deviations); CUDA uses cuDNN's spatial batch norm for the batch-statistics passes and baton's
// own deterministic kernels for the frozen-statistics backward.
#pragma once

#include <functional>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// Training forward with batch statistics: per channel, mean μ and biased variance σ² over the
// M = N·H·W elements (M >= 2); y = (x − μ)·invstd·γ + β with invstd = 1/sqrt(σ² + eps).
// save_mean = μ and save_invstd = invstd are what batch_norm_backward_train needs.
// running_mean and running_var (both defined, or both undefined to leave them alone) are updated in
// place as PyTorch does: r = (1 − momentum)·r + momentum·s, with the unbiased variance σ²·M/(M − 1)
// for running_var. num_batches_tracked (an i64 scalar, or undefined) is then incremented by one.
// eps > 0, momentum in [0, 1].
void batch_norm_forward_train(Context& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                              double momentum, const Tensor& y, const Tensor& save_mean, const Tensor& save_invstd,
                              const Tensor& running_mean, const Tensor& running_var, const Tensor& num_batches_tracked);

// Forward with given statistics (eval mode, or frozen statistics in training):
// y = (x − mean)/sqrt(var + eps)·γ + β.
void batch_norm_forward_eval(Context& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias,
                             const Tensor& mean, const Tensor& var, double eps, const Tensor& y);

// Backward of batch_norm_forward_train (the batch statistics depend on x). With x̂ = (x − μ)·invstd:
//   dx = γ·invstd·(dy − Σdy/M − x̂·Σ(dy·x̂)/M)   (written; skipped when dx is undefined)
//   weight_grad += Σ dy·x̂,  bias_grad += Σ dy     (accumulated; both undefined to skip them)
// eps is the forward's (cuDNN is given it alongside save_mean and save_invstd).
void batch_norm_backward_train(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& weight,
                               const Tensor& save_mean, const Tensor& save_invstd, double eps, const Tensor& dx,
                               const Tensor& weight_grad, const Tensor& bias_grad);

// Backward of batch_norm_forward_eval (statistics are constants). With invstd = 1/sqrt(var + eps):
//   dx = dy·γ·invstd, weight_grad += Σ dy·(x − mean)·invstd, bias_grad += Σ dy
// with the same rules for undefined outputs as batch_norm_backward_train.
void batch_norm_backward_eval(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& weight, const Tensor& mean,
                              const Tensor& var, double eps, const Tensor& dx, const Tensor& weight_grad,
                              const Tensor& bias_grad);

// The two passes batch_norm_library_call makes bare.
enum class BatchNormPass { forward_train, backward_train };

// The tensors of the passes, named as in the ops above: forward_train reads x, weight, bias and
// writes y, save_mean, save_invstd (running_mean and running_var updated when defined);
// backward_train reads x, dy, weight, save_mean, save_invstd and writes dx, accumulating into
// weight_grad and bias_grad; the eval passes read their given statistics from mean and var. The
// tensors a pass does not use may be left out (undefined).
struct BatchNormTensors {
  Tensor x{}, weight{}, bias{}, y{}, save_mean{}, save_invstd{}, running_mean{}, running_var{};
  Tensor dy{}, dx{}, weight_grad{}, bias_grad{};
  Tensor mean{}, var{};
};

// The cuDNN call batch_norm_forward_train / batch_norm_backward_train makes for `pass`
// (cudnnBatchNormalizationForwardTraining / cudnnBatchNormalizationBackward), bare: the arguments
// checked and the descriptors made once here, so each call of the result issues only the library
// call (no num_batches_tracked increment). For benchmarks that measure baton's overhead over cuDNN.
// Every tensor the pass uses must be defined (a bare call has no ones, zeros or scratch to stand
// in for an absent one), except running_mean and running_var (both or neither), and x must not be
// empty. momentum is used by forward_train only. Empty on CPU contexts. The tensors must stay
// alive while the returned function is used.
std::function<void()> batch_norm_library_call(Context& ctx, BatchNormPass pass, const BatchNormTensors& tensors,
                                              double eps, double momentum = 0.1);

}  // namespace baton::kernels
