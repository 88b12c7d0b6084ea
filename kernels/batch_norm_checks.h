// The argument checks of the batch-norm ops (kernels/batch_norm_checks.cc).
#pragma once

#include <initializer_list>
#include <string_view>

#include "kernels/op_checks.h"

namespace baton::kernels::batch_norm_checks {

// Whether any of the activations is channels-last (undefined ones are not).
bool any_channels_last(std::initializer_list<const Tensor*> tensors);

// A per-channel tensor: [C] of x's dtype on the context's device (skipped when undefined and optional).
void check_channel(std::string_view op, const Context& ctx, const NamedTensor& x, const NamedTensor& t,
                   bool optional = false);

// eps is finite and > 0.
void check_eps(std::string_view op, double eps);

// The checks both forward ops share: x, y alike, weight and bias optional.
void check_forward(std::string_view op, const Context& ctx, const NamedTensor& x, const Tensor& y, const Tensor& weight,
                   const Tensor& bias);

// The checks of batch_norm_forward_train (num_batches_tracked may be undefined).
void check_forward_train(std::string_view op, const Context& ctx, const Tensor& x, const Tensor& weight,
                         const Tensor& bias, double eps, double momentum, const Tensor& y, const Tensor& save_mean,
                         const Tensor& save_invstd, const Tensor& running_mean, const Tensor& running_var,
                         const Tensor& num_batches_tracked);

// The checks both backward ops share: x, dy (and dx when defined) alike, weight optional,
// weight_grad and bias_grad both or neither. `stat_a` and `stat_b` are the statistics.
void check_backward(std::string_view op, const Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& weight,
                    const NamedTensor& stat_a, const NamedTensor& stat_b, double eps, const Tensor& dx,
                    const Tensor& weight_grad, const Tensor& bias_grad);

}  // namespace baton::kernels::batch_norm_checks
