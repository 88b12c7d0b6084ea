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
bool dnnl_forward_train([[maybe_unused]] Context& ctx, [[maybe_unused]] const Tensor& x,
                        [[maybe_unused]] const Tensor& weight, [[maybe_unused]] const Tensor& bias,
                        [[maybe_unused]] double eps, [[maybe_unused]] double momentum, [[maybe_unused]] const Tensor& y,
                        [[maybe_unused]] const Tensor& save_mean, [[maybe_unused]] const Tensor& save_invstd,
                        [[maybe_unused]] const Tensor& running_mean, [[maybe_unused]] const Tensor& running_var) {
#if BATON_HAVE_DNNL
  if (x.dtype() != DType::f32 || !weight.defined() || !bias.defined()) return false;
  if (x.format() != MemoryFormat::channels_last || y.format() != MemoryFormat::channels_last) return false;
  const auto channels = static_cast<size_t>(x.size(1));
  std::vector<float> mean(channels), var(channels);
  if (!cpu::dnnl_batch_norm_forward_train_nhwc(dims_of(x), static_cast<float>(eps), x.data<float>(),
                                               weight.data<float>(), bias.data<float>(), y.data<float>(), mean.data(),
                                               var.data(), workspace_of(ctx))) {
    return false;
  }
  const double count = static_cast<double>(x.size(0) * x.size(2) * x.size(3));
  float *sm = save_mean.data<float>(), *si = save_invstd.data<float>();
  float* rm = running_mean.defined() ? running_mean.data<float>() : nullptr;
  float* rv = running_var.defined() ? running_var.data<float>() : nullptr;
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
bool dnnl_backward_train([[maybe_unused]] Context& ctx, [[maybe_unused]] const Tensor& x,
                         [[maybe_unused]] const Tensor& dy, [[maybe_unused]] const Tensor& weight,
                         [[maybe_unused]] const Tensor& save_mean, [[maybe_unused]] const Tensor& save_invstd,
                         [[maybe_unused]] double eps, [[maybe_unused]] const Tensor& dx,
                         [[maybe_unused]] const Tensor& weight_grad, [[maybe_unused]] const Tensor& bias_grad) {
#if BATON_HAVE_DNNL
  if (x.dtype() != DType::f32 || !weight.defined() || !dx.defined() || !weight_grad.defined()) return false;
  for (const Tensor* t : {&x, &dy, &dx}) {
    if (t->format() != MemoryFormat::channels_last) return false;
  }
  const float* invstd = save_invstd.data<float>();
  std::vector<float> var(static_cast<size_t>(x.size(1)));
  for (size_t c = 0; c < var.size(); ++c) {
    const double s = static_cast<double>(invstd[c]);
    var[c] = static_cast<float>(1.0 / (s * s) - eps);
  }
  return cpu::dnnl_batch_norm_backward_train_nhwc(dims_of(x), static_cast<float>(eps), x.data<float>(),
                                                  dy.data<float>(), weight.data<float>(), save_mean.data<float>(),
                                                  var.data(), dx.data<float>(), weight_grad.data<float>(),
                                                  bias_grad.data<float>(), workspace_of(ctx));
#else
  return false;
#endif
}

}  // namespace

void batch_norm_forward_train(Context& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                              double momentum, const Tensor& y, const Tensor& save_mean, const Tensor& save_invstd,
                              const Tensor& running_mean, const Tensor& running_var) {
  if (dnnl_forward_train(ctx, x, weight, bias, eps, momentum, y, save_mean, save_invstd, running_mean, running_var)) {
    return;
  }
  const RowMajorOutput out(ctx, y);
  kernels::batch_norm_forward_train(ctx, row_major(ctx, x), weight, bias, eps, momentum, out.tensor(), save_mean,
                                    save_invstd, running_mean, running_var, Tensor());
  out.write_back();
}

void batch_norm_forward_eval(Context& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias,
                             const Tensor& mean, const Tensor& var, double eps, const Tensor& y) {
  const RowMajorOutput out(ctx, y);
  kernels::batch_norm_forward_eval(ctx, row_major(ctx, x), weight, bias, mean, var, eps, out.tensor());
  out.write_back();
}

void batch_norm_backward_train(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& weight,
                               const Tensor& save_mean, const Tensor& save_invstd, double eps, const Tensor& dx,
                               const Tensor& weight_grad, const Tensor& bias_grad) {
  if (dnnl_backward_train(ctx, x, dy, weight, save_mean, save_invstd, eps, dx, weight_grad, bias_grad)) return;
  const RowMajorOutput out(ctx, dx);
  kernels::batch_norm_backward_train(ctx, row_major(ctx, x), row_major(ctx, dy), weight, save_mean, save_invstd, eps,
                                     out.tensor(), weight_grad, bias_grad);
  out.write_back();
}

void batch_norm_backward_eval(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& weight, const Tensor& mean,
                              const Tensor& var, double eps, const Tensor& dx, const Tensor& weight_grad,
                              const Tensor& bias_grad) {
  const RowMajorOutput out(ctx, dx);
  kernels::batch_norm_backward_eval(ctx, row_major(ctx, x), row_major(ctx, dy), weight, mean, var, eps, out.tensor(),
                                    weight_grad, bias_grad);
  out.write_back();
}

}  // namespace baton::kernels::channels_last
