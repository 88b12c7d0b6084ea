// The cuDNN batch-norm arguments built from the op's tensors (kernels/batch_norm_cudnn_args.h).
#include "kernels/batch_norm_cudnn_args.h"

#include "runtime/core/fill_pattern.h"

namespace baton::kernels::batch_norm_cudnn {

cuda::BatchNormDims dims_of(const Tensor& x) { return {x.size(0), x.size(1), x.size(2), x.size(3)}; }

void* pointer_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

void* channel_or_constant(Context& ctx, const Tensor& t, const Scratch& scratch, int piece, DType dtype,
                          int64_t channels, double value) {
  if (t.defined()) return t.data_ptr();
  void* p = scratch.get(piece);
  detail::fill_pattern(p, ctx.device(), channels, dtype_size(dtype), detail::element_bits(value, dtype), ctx.stream());
  return p;
}

cuda::BatchNormForwardTrainArgs forward_train_args(const Tensor& x, const void* scale, const void* bias, double eps,
                                                   double momentum, const Tensor& y, const Tensor& save_mean,
                                                   const Tensor& save_invstd, const Tensor& running_mean,
                                                   const Tensor& running_var) {
  return {.dtype = x.dtype(),
          .dims = dims_of(x),
          .x = x.data_ptr(),
          .weight = scale,
          .bias = bias,
          .eps = eps,
          .momentum = momentum,
          .y = y.data_ptr(),
          .save_mean = save_mean.data_ptr(),
          .save_invstd = save_invstd.data_ptr(),
          .running_mean = pointer_or_null(running_mean),
          .running_var = pointer_or_null(running_var)};
}

cuda::BatchNormBackwardTrainArgs backward_train_args(const Tensor& x, const Tensor& dy, const void* scale,
                                                     const Tensor& save_mean, const Tensor& save_invstd, double eps,
                                                     void* dx, void* weight_grad, void* bias_grad,
                                                     bool accumulate_param_grads) {
  return {.dtype = x.dtype(),
          .dims = dims_of(x),
          .x = x.data_ptr(),
          .dy = dy.data_ptr(),
          .weight = scale,
          .save_mean = save_mean.data_ptr(),
          .save_invstd = save_invstd.data_ptr(),
          .eps = eps,
          .dx = dx,
          .weight_grad = weight_grad,
          .bias_grad = bias_grad,
          .accumulate_param_grads = accumulate_param_grads};
}

size_t channel_bytes(const Tensor& x) { return static_cast<size_t>(x.size(1)) * dtype_size(x.dtype()); }

ScaleBias scale_bias_or_constants(Context& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  Scratch scratch;
  const int ones = scratch.plan(!weight.defined(), channel_bytes(x));
  const int zeros = scratch.plan(!bias.defined(), channel_bytes(x));
  scratch.acquire(ctx);
  return {channel_or_constant(ctx, weight, scratch, ones, x.dtype(), x.size(1), 1.0),
          channel_or_constant(ctx, bias, scratch, zeros, x.dtype(), x.size(1), 0.0)};
}

}  // namespace baton::kernels::batch_norm_cudnn
