// Channels-last batch norm on the CPU: oneDNN's NHWC primitives for float32 training with affine
// parameters, else the reference through row-major copies.
#include "kernels/batch_norm_channels_last.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/batch_norm.h"
#include "kernels/cpu/batch_norm_cpu.h"
#include "kernels/layout.h"
#include "runtime/core/build_config.h"  // first: BATON_HAVE_DNNL
#if BATON_HAVE_DNNL
#include "kernels/cpu/batch_norm_dnnl.h"
#endif

namespace baton::kernels::channels_last {
namespace {

Tensor row_major(Context& ctx, const Tensor& t) { return to_memory_format(ctx, t, MemoryFormat::contiguous); }

#if BATON_HAVE_DNNL
cpu::BatchNormNhwc dims_of(const Tensor& x) { return {x.size(0), x.size(1), x.size(2), x.size(3)}; }
cpu::Workspace workspace_of(Context& ctx) {
  return [&ctx](size_t bytes) { return ctx.workspace(bytes); };
}
#endif

// oneDNN's forward; then save_mean, save_invstd and the running statistics from its mean and
// biased variance, in double as the reference does. False when it does not apply.
bool dnnl_forward_train([[maybe_unused]] Context& ctx, [[maybe_unused]] const BatchNormTensors& t,
                        [[maybe_unused]] double eps, [[maybe_unused]] double momentum) {
#if BATON_HAVE_DNNL
  if (t.x.dtype() != DType::f32 || !t.weight.defined() || !t.bias.defined()) return false;
  if (t.x.format() != MemoryFormat::channels_last || t.y.format() != MemoryFormat::channels_last) return false;
  const auto channels = static_cast<size_t>(t.x.size(1));
  std::vector<float> mean(channels), var(channels);
  if (!cpu::dnnl_batch_norm_forward_train_nhwc(dims_of(t.x), static_cast<float>(eps), t.x.data<float>(),
                                               t.weight.data<float>(), t.bias.data<float>(), t.y.data<float>(),
                                               mean.data(), var.data(), workspace_of(ctx))) {
    return false;
  }
  const double count = static_cast<double>(t.x.size(0) * t.x.size(2) * t.x.size(3));
  float *sm = t.save_mean.data<float>(), *si = t.save_invstd.data<float>();
  float* rm = t.running_mean.defined() ? t.running_mean.data<float>() : nullptr;
  float* rv = t.running_var.defined() ? t.running_var.data<float>() : nullptr;
  for (size_t c = 0; c < channels; ++c) {
    sm[c] = mean[c];
    si[c] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var[c]) + eps));
    if (rm == nullptr) continue;
    cpu::update_running_statistics(rm[c], rv[c], static_cast<double>(mean[c]), static_cast<double>(var[c]), count,
                                   momentum);
  }
  return true;
#else
  return false;
#endif
}

// oneDNN's backward, given the variance back from save_invstd. False when it does not apply.
bool dnnl_backward_train([[maybe_unused]] Context& ctx, [[maybe_unused]] const BatchNormTensors& t,
                         [[maybe_unused]] double eps) {
#if BATON_HAVE_DNNL
  if (t.x.dtype() != DType::f32 || !t.weight.defined() || !t.dx.defined() || !t.weight_grad.defined()) return false;
  for (const Tensor* u : {&t.x, &t.dy, &t.dx}) {
    if (u->format() != MemoryFormat::channels_last) return false;
  }
  const float* invstd = t.save_invstd.data<float>();
  std::vector<float> var(static_cast<size_t>(t.x.size(1)));
  for (size_t c = 0; c < var.size(); ++c) {
    const double s = static_cast<double>(invstd[c]);
    var[c] = static_cast<float>(1.0 / (s * s) - eps);
  }
  return cpu::dnnl_batch_norm_backward_train_nhwc(dims_of(t.x), static_cast<float>(eps), t.x.data<float>(),
                                                  t.dy.data<float>(), t.weight.data<float>(), t.save_mean.data<float>(),
                                                  var.data(), t.dx.data<float>(), t.weight_grad.data<float>(),
                                                  t.bias_grad.data<float>(), workspace_of(ctx));
#else
  return false;
#endif
}

}  // namespace

void batch_norm(Context& ctx, BatchNormOp op, const BatchNormTensors& t, double eps, double momentum) {
  if (op == BatchNormOp::forward_train && dnnl_forward_train(ctx, t, eps, momentum)) return;
  if (op == BatchNormOp::backward_train && dnnl_backward_train(ctx, t, eps)) return;
  const bool forward = op == BatchNormOp::forward_train || op == BatchNormOp::forward_eval;
  const RowMajorOutput out(ctx, forward ? t.y : t.dx);
  const Tensor x = row_major(ctx, t.x);
  switch (op) {
    case BatchNormOp::forward_train:
      kernels::batch_norm_forward_train(ctx, x, t.weight, t.bias, eps, momentum, out.tensor(), t.save_mean,
                                        t.save_invstd, t.running_mean, t.running_var, Tensor());
      break;
    case BatchNormOp::forward_eval:
      kernels::batch_norm_forward_eval(ctx, x, t.weight, t.bias, t.mean, t.var, eps, out.tensor());
      break;
    case BatchNormOp::backward_train:
      kernels::batch_norm_backward_train(ctx, x, row_major(ctx, t.dy), t.weight, t.save_mean, t.save_invstd, eps,
                                         out.tensor(), t.weight_grad, t.bias_grad);
      break;
    case BatchNormOp::backward_eval:
      kernels::batch_norm_backward_eval(ctx, x, row_major(ctx, t.dy), t.weight, t.mean, t.var, eps, out.tensor(),
                                        t.weight_grad, t.bias_grad);
      break;
  }
  out.write_back();
}

}  // namespace baton::kernels::channels_last
