// Batch-norm ops: argument checks (kernels/batch_norm_checks.h), then the CPU reference (or, for
// channels-last activations, kernels/batch_norm_channels_last.h) or the CUDA launchers (cuDNN and baton's
// kernels). For cuDNN, pointers it needs but the caller did not give (γ = 1, β = 0 without affine
// parameters, scratch for an unwanted dx or unwanted parameter gradients) come from ctx.workspace.
#include "kernels/batch_norm.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "kernels/batch_norm_channels_last.h"
#include "kernels/batch_norm_checks.h"
#include "kernels/batch_norm_cudnn_args.h"
#include "kernels/cpu/batch_norm_cpu.h"
#include "kernels/cuda/batch_norm_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

// The cuDNN arguments (kernels/batch_norm_cudnn_args.h).
using batch_norm_cudnn::backward_train_args;
using batch_norm_cudnn::channel_bytes;
using batch_norm_cudnn::channel_or_constant;
using batch_norm_cudnn::dims_of;
using batch_norm_cudnn::forward_train_args;
using batch_norm_cudnn::pointer_or_null;
using batch_norm_cudnn::scale_bias_or_constants;
using batch_norm_cudnn::ScaleBias;
using batch_norm_cudnn::Scratch;
// The argument checks (kernels/batch_norm_checks.h).
using batch_norm_checks::any_channels_last;
using batch_norm_checks::check_backward;
using batch_norm_checks::check_channel;
using batch_norm_checks::check_eps;
using batch_norm_checks::check_forward;
using batch_norm_checks::check_forward_train;

// The per-channel tensor t as doubles on the host (CPU tensors only).
template <typename T>
std::vector<double> channel_values(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<double>(p, p + t.numel());
}

template <typename T>
T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// Both backward passes: the checks, then the CPU side or `on_cuda`. Train differentiates through the
// batch statistics (stat_a, stat_b = save_mean, save_invstd), eval through the given ones (mean, var;
// invstd = 1/sqrt(var + eps)).
template <typename OnCuda>
void backward(std::string_view op, Context& ctx, bool train, const Tensor& x, const Tensor& dy, const Tensor& weight,
              const NamedTensor& stat_a, const NamedTensor& stat_b, double eps, const Tensor& dx,
              const Tensor& weight_grad, const Tensor& bias_grad, OnCuda on_cuda) {
  check_backward(op, ctx, x, dy, weight, stat_a, stat_b, eps, dx, weight_grad, bias_grad);
  if (x.numel() == 0 || (!dx.defined() && !weight_grad.defined())) return;
  const auto on_cpu = [&] {
    if (any_channels_last({&x, &dy, &dx})) {
      BatchNormTensors t{
          .x = x, .weight = weight, .dy = dy, .dx = dx, .weight_grad = weight_grad, .bias_grad = bias_grad};
      (train ? t.save_mean : t.mean) = stat_a.tensor;
      (train ? t.save_invstd : t.var) = stat_b.tensor;
      return channels_last::batch_norm(
          ctx, train ? channels_last::BatchNormOp::backward_train : channels_last::BatchNormOp::backward_eval, t, eps);
    }
    dispatch_f32_f64(op, x.dtype(), [&]<typename T>() {
      std::vector<double> invstd = channel_values<T>(stat_b.tensor);
      if (!train) {
        for (double& v : invstd) v = 1.0 / std::sqrt(v + eps);
      }
      cpu::batch_norm_backward(x.data<T>(), dy.data<T>(), data_or_null<T>(weight), x.size(0), x.size(1),
                               x.size(2) * x.size(3), channel_values<T>(stat_a.tensor), invstd, train,
                               data_or_null<T>(dx), data_or_null<T>(weight_grad), data_or_null<T>(bias_grad));
    });
  };
  on_device(op, ctx, on_cpu, on_cuda);
}

}  // namespace

void batch_norm_forward_train(Context& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                              double momentum, const Tensor& y, const Tensor& save_mean, const Tensor& save_invstd,
                              const Tensor& running_mean, const Tensor& running_var,
                              const Tensor& num_batches_tracked) {
  constexpr std::string_view op = "batch_norm_forward_train";
  check_forward_train(op, ctx, x, weight, bias, eps, momentum, y, save_mean, save_invstd, running_mean, running_var,
                      num_batches_tracked);
  on_device(
      op, ctx,
      [&] {
        if (any_channels_last({&x, &y})) {
          channels_last::batch_norm(ctx, channels_last::BatchNormOp::forward_train,
                                    {.x = x,
                                     .weight = weight,
                                     .bias = bias,
                                     .y = y,
                                     .save_mean = save_mean,
                                     .save_invstd = save_invstd,
                                     .running_mean = running_mean,
                                     .running_var = running_var},
                                    eps, momentum);
        } else {
          dispatch_f32_f64(op, x.dtype(), [&]<typename T>() {
            cpu::batch_norm_forward_train(x.data<T>(), data_or_null<T>(weight), data_or_null<T>(bias), x.size(0),
                                          x.size(1), x.size(2) * x.size(3), eps, momentum, y.data<T>(),
                                          save_mean.data<T>(), save_invstd.data<T>(), data_or_null<T>(running_mean),
                                          data_or_null<T>(running_var));
          });
        }
        if (num_batches_tracked.defined()) ++*num_batches_tracked.data<int64_t>();
      },
      [&](auto& cuda_ctx) {
        if (x.numel() > 0) {  // no channels: nothing to normalise
          const ScaleBias sb = scale_bias_or_constants(cuda_ctx, x, weight, bias);
          cuda::batch_norm_forward_train(cuda_ctx, forward_train_args(x, sb.scale, sb.bias, eps, momentum, y, save_mean,
                                                                      save_invstd, running_mean, running_var));
        }
        if (num_batches_tracked.defined()) cuda::increment_counter(cuda_ctx, num_batches_tracked.data<int64_t>());
      });
}

void batch_norm_forward_eval(Context& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias,
                             const Tensor& mean, const Tensor& var, double eps, const Tensor& y) {
  constexpr std::string_view op = "batch_norm_forward_eval";
  const NamedTensor nx{"x", x};
  check_forward(op, ctx, nx, y, weight, bias);
  check_channel(op, ctx, nx, {"mean", mean});
  check_channel(op, ctx, nx, {"var", var});
  check_eps(op, eps);
  if (x.numel() == 0) return;
  on_device(
      op, ctx,
      [&] {
        if (any_channels_last({&x, &y})) {
          return channels_last::batch_norm(ctx, channels_last::BatchNormOp::forward_eval,
                                           {.x = x, .weight = weight, .bias = bias, .y = y, .mean = mean, .var = var},
                                           eps);
        }
        dispatch_f32_f64(op, x.dtype(), [&]<typename T>() {
          std::vector<double> mu = channel_values<T>(mean), invstd = channel_values<T>(var);
          for (double& v : invstd) v = 1.0 / std::sqrt(v + eps);
          cpu::batch_norm_normalize(x.data<T>(), data_or_null<T>(weight), data_or_null<T>(bias), x.size(0), x.size(1),
                                    x.size(2) * x.size(3), mu, invstd, y.data<T>());
        });
      },
      [&](auto& cuda_ctx) {
        const ScaleBias sb = scale_bias_or_constants(cuda_ctx, x, weight, bias);
        cuda::batch_norm_forward_eval(cuda_ctx, x.dtype(), dims_of(x), x.data_ptr(), sb.scale, sb.bias, mean.data_ptr(),
                                      var.data_ptr(), eps, y.data_ptr());
      });
}

void batch_norm_backward_train(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& weight,
                               const Tensor& save_mean, const Tensor& save_invstd, double eps, const Tensor& dx,
                               const Tensor& weight_grad, const Tensor& bias_grad) {
  backward("batch_norm_backward_train", ctx, true, x, dy, weight, {"save_mean", save_mean},
           {"save_invstd", save_invstd}, eps, dx, weight_grad, bias_grad, [&](auto& cuda_ctx) {
             Scratch scratch;
             const int ones = scratch.plan(!weight.defined(), channel_bytes(x));
             const int dx_scratch = scratch.plan(!dx.defined(), x.nbytes());
             const int dw_scratch = scratch.plan(!weight_grad.defined(), channel_bytes(x));
             const int db_scratch = scratch.plan(!bias_grad.defined(), channel_bytes(x));
             scratch.acquire(cuda_ctx);
             cuda::batch_norm_backward_train(
                 cuda_ctx,
                 backward_train_args(
                     x, dy, channel_or_constant(cuda_ctx, weight, scratch, ones, x.dtype(), x.size(1), 1.0), save_mean,
                     save_invstd, eps, dx.defined() ? dx.data_ptr() : scratch.get(dx_scratch),
                     weight_grad.defined() ? weight_grad.data_ptr() : scratch.get(dw_scratch),
                     bias_grad.defined() ? bias_grad.data_ptr() : scratch.get(db_scratch), weight_grad.defined()));
           });
}

void batch_norm_backward_eval(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& weight, const Tensor& mean,
                              const Tensor& var, double eps, const Tensor& dx, const Tensor& weight_grad,
                              const Tensor& bias_grad) {
  backward("batch_norm_backward_eval", ctx, false, x, dy, weight, {"mean", mean}, {"var", var}, eps, dx, weight_grad,
           bias_grad, [&](auto& cuda_ctx) {
             cuda::batch_norm_backward_eval(
                 cuda_ctx, x.dtype(), dims_of(x), x.data_ptr(), dy.data_ptr(), pointer_or_null(weight), mean.data_ptr(),
                 var.data_ptr(), eps, pointer_or_null(dx), pointer_or_null(weight_grad), pointer_or_null(bias_grad));
           });
}

std::function<void()> batch_norm_library_call(Context& ctx, BatchNormPass pass, const BatchNormTensors& t, double eps,
                                              double momentum) {
  constexpr std::string_view op = "batch_norm_library_call";
  // The op's checks, then the tensors the bare call cannot do without.
  const auto require = [&](std::initializer_list<NamedTensor> tensors) {
    for (const NamedTensor& n : tensors) {
      BATON_CHECK(n.tensor.defined(), op, ": argument '", n.name, "' is undefined; the bare cuDNN call needs it");
    }
  };
  if (pass == BatchNormPass::forward_train) {
    check_forward_train(op, ctx, t.x, t.weight, t.bias, eps, momentum, t.y, t.save_mean, t.save_invstd, t.running_mean,
                        t.running_var, Tensor());
    require({{"weight", t.weight}, {"bias", t.bias}});
  } else {
    check_backward(op, ctx, t.x, t.dy, t.weight, {"save_mean", t.save_mean}, {"save_invstd", t.save_invstd}, eps, t.dx,
                   t.weight_grad, t.bias_grad);
    require({{"weight", t.weight}, {"dx", t.dx}, {"weight_grad", t.weight_grad}, {"bias_grad", t.bias_grad}});
  }
  BATON_CHECK(t.x.numel() > 0, op, ": an empty input makes no library call");
  return on_device(
      op, ctx, [] { return std::function<void()>{}; },
      [&](auto& cuda_ctx) {
        if (pass == BatchNormPass::forward_train) {
          return cuda::batch_norm_forward_train_call(
              cuda_ctx, forward_train_args(t.x, t.weight.data_ptr(), t.bias.data_ptr(), eps, momentum, t.y, t.save_mean,
                                           t.save_invstd, t.running_mean, t.running_var));
        }
        return cuda::batch_norm_backward_train_call(
            cuda_ctx, backward_train_args(t.x, t.dy, t.weight.data_ptr(), t.save_mean, t.save_invstd, eps,
                                          t.dx.data_ptr(), t.weight_grad.data_ptr(), t.bias_grad.data_ptr(), true));
      });
}

}  // namespace baton::kernels
