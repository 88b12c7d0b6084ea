// The argument checks of the batch-norm ops (kernels/batch_norm.h); each failure names the op and
// the argument.
#include "kernels/batch_norm_checks.h"

#include <cmath>

namespace baton::kernels::batch_norm_checks {
namespace {

// Activations: on the context's device, row-major on CUDA, in either format on the CPU
// (kernels/batch_norm_channels_last.h).
void check_activation(std::string_view op, const Context& ctx, const NamedTensor& t) {
  check_on_context_any_format(op, ctx, {t});
  if (ctx.device().is_cuda()) check_on_context(op, ctx, {t});
}

// x: on the context's device, [N, C, H, W], f32 or f64.
void check_input(std::string_view op, const Context& ctx, const NamedTensor& x) {
  check_activation(op, ctx, x);
  check_rank(op, x, 4);
  check_dtype_in(op, x, {DType::f32, DType::f64});
}

// A tensor of x's shape and dtype on the context's device (skipped when undefined and optional).
void check_like_input(std::string_view op, const Context& ctx, const NamedTensor& x, const NamedTensor& t,
                      bool optional = false) {
  if (optional && !t.tensor.defined()) return;
  check_activation(op, ctx, t);
  check_same_shape(op, {x, t});
  check_same_dtype(op, {x, t});
}

// Both defined or both undefined.
void check_pair(std::string_view op, const NamedTensor& a, const NamedTensor& b) {
  BATON_CHECK(a.tensor.defined() == b.tensor.defined(), op, ": arguments '", a.name, "' and '", b.name,
              "' must both be defined or both be undefined ('", a.tensor.defined() ? a.name : b.name,
              "' is the only one defined)");
}

}  // namespace

// Whether any of the activations is channels-last (undefined ones are not).
bool any_channels_last(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (t->defined() && t->format() == MemoryFormat::channels_last) return true;
  }
  return false;
}

// A per-channel tensor: [C] of x's dtype on the context's device (skipped when undefined and optional).
void check_channel(std::string_view op, const Context& ctx, const NamedTensor& x, const NamedTensor& t, bool optional) {
  if (optional && !t.tensor.defined()) return;
  check_on_context(op, ctx, {t});
  const int64_t channels = x.tensor.size(1);
  BATON_CHECK(t.tensor.shape() == Shape{channels}, op, ": argument '", t.name, "' has shape ", t.tensor.shape().str(),
              ", expected [", channels, "] (the channels of '", x.name, "', shape ", x.tensor.shape().str(), ")");
  check_same_dtype(op, {x, t});
}

void check_eps(std::string_view op, double eps) {
  BATON_CHECK(eps > 0.0 && std::isfinite(eps), op, ": eps is ", eps, ", expected a finite value > 0");
}

// The checks both forward ops share: x, y alike, weight and bias optional.
void check_forward(std::string_view op, const Context& ctx, const NamedTensor& x, const Tensor& y, const Tensor& weight,
                   const Tensor& bias) {
  check_input(op, ctx, x);
  check_like_input(op, ctx, x, {"y", y});
  check_channel(op, ctx, x, {"weight", weight}, true);
  check_channel(op, ctx, x, {"bias", bias}, true);
}

// The checks of batch_norm_forward_train (num_batches_tracked may be undefined).
void check_forward_train(std::string_view op, const Context& ctx, const Tensor& x, const Tensor& weight,
                         const Tensor& bias, double eps, double momentum, const Tensor& y, const Tensor& save_mean,
                         const Tensor& save_invstd, const Tensor& running_mean, const Tensor& running_var,
                         const Tensor& num_batches_tracked) {
  const NamedTensor nx{"x", x};
  check_forward(op, ctx, nx, y, weight, bias);
  check_channel(op, ctx, nx, {"save_mean", save_mean});
  check_channel(op, ctx, nx, {"save_invstd", save_invstd});
  check_pair(op, {"running_mean", running_mean}, {"running_var", running_var});
  check_channel(op, ctx, nx, {"running_mean", running_mean}, true);
  check_channel(op, ctx, nx, {"running_var", running_var}, true);
  if (num_batches_tracked.defined()) {
    check_on_context(op, ctx, {{"num_batches_tracked", num_batches_tracked}});
    BATON_CHECK(num_batches_tracked.dtype() == DType::i64 && num_batches_tracked.shape() == Shape{}, op,
                ": argument 'num_batches_tracked' is ", dtype_name(num_batches_tracked.dtype()), " of shape ",
                num_batches_tracked.shape().str(), ", expected an i64 scalar (shape [])");
  }
  check_eps(op, eps);
  BATON_CHECK(momentum >= 0.0 && momentum <= 1.0, op, ": momentum is ", momentum, ", expected a value in [0, 1]");
  const int64_t per_channel = x.size(0) * x.size(2) * x.size(3);
  BATON_CHECK(per_channel > 1, op, ": expected more than 1 value per channel when training, got input of shape ",
              x.shape().str());
}

// The checks both backward ops share: x, dy (and dx when defined) alike, weight optional,
// weight_grad and bias_grad both or neither. `stat_a` and `stat_b` are the statistics.
void check_backward(std::string_view op, const Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& weight,
                    const NamedTensor& stat_a, const NamedTensor& stat_b, double eps, const Tensor& dx,
                    const Tensor& weight_grad, const Tensor& bias_grad) {
  const NamedTensor nx{"x", x};
  check_input(op, ctx, nx);
  check_like_input(op, ctx, nx, {"dy", dy});
  check_like_input(op, ctx, nx, {"dx", dx}, true);
  check_channel(op, ctx, nx, {"weight", weight}, true);
  check_channel(op, ctx, nx, stat_a);
  check_channel(op, ctx, nx, stat_b);
  check_pair(op, {"weight_grad", weight_grad}, {"bias_grad", bias_grad});
  check_channel(op, ctx, nx, {"weight_grad", weight_grad}, true);
  check_channel(op, ctx, nx, {"bias_grad", bias_grad}, true);
  check_eps(op, eps);
}

}  // namespace baton::kernels::batch_norm_checks
