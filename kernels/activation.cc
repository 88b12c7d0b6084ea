// Activation ops: argument checks, then the CPU reference or the CUDA launchers.
#include "kernels/activation.h"

#include <cmath>
#include <string_view>

#include "kernels/activation_math.h"
#include "kernels/cpu/activation_cpu.h"
#include "kernels/cuda/activation_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

void forward(std::string_view op, Activation activation, Context& ctx, const Tensor& x, const Tensor& out) {
  check_pointwise(op, ctx, {{"x", x}}, {"out", out});
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, x.dtype(), [&]<typename T>() {
          cpu::activation_forward(activation, x.data<T>(), out.data<T>(), out.numel());
        });
      },
      [&](auto& cuda_ctx) {
        cuda::activation_forward(cuda_ctx, activation, x.dtype(), x.data_ptr(), out.data_ptr(), out.numel());
      });
}

// `saved` is named `saved_name` ("x" or "y") in messages.
void backward(std::string_view op, Activation activation, Context& ctx, std::string_view saved_name,
              const Tensor& saved, const Tensor& dy, const Tensor& dx) {
  check_pointwise(op, ctx, {{saved_name, saved}, {"dy", dy}}, {"dx", dx});
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, dy.dtype(), [&]<typename T>() {
          cpu::activation_backward(activation, saved.data<T>(), dy.data<T>(), dx.data<T>(), dx.numel());
        });
      },
      [&](auto& cuda_ctx) {
        cuda::activation_backward(cuda_ctx, activation, dy.dtype(), saved.data_ptr(), dy.data_ptr(), dx.data_ptr(),
                                  dx.numel());
      });
}

}  // namespace

void relu6_forward(Context& ctx, const Tensor& x, const Tensor& out) {
  forward("relu6_forward", Activation::relu6, ctx, x, out);
}
void relu6_backward(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& dx) {
  backward("relu6_backward", Activation::relu6, ctx, "x", x, dy, dx);
}
void sigmoid_forward(Context& ctx, const Tensor& x, const Tensor& out) {
  forward("sigmoid_forward", Activation::sigmoid, ctx, x, out);
}
void sigmoid_backward(Context& ctx, const Tensor& y, const Tensor& dy, const Tensor& dx) {
  backward("sigmoid_backward", Activation::sigmoid, ctx, "y", y, dy, dx);
}
void tanh_forward(Context& ctx, const Tensor& x, const Tensor& out) {
  forward("tanh_forward", Activation::tanh, ctx, x, out);
}
void tanh_backward(Context& ctx, const Tensor& y, const Tensor& dy, const Tensor& dx) {
  backward("tanh_backward", Activation::tanh, ctx, "y", y, dy, dx);
}

void scale_by_scalar(Context& ctx, const Tensor& x, const Tensor& scalar, double alpha, const Tensor& out) {
  constexpr std::string_view op = "scale_by_scalar";
  check_pointwise(op, ctx, {{"x", x}}, {"out", out});
  check_on_context(op, ctx, {{"scalar", scalar}});
  BATON_CHECK(scalar.numel() == 1 && scalar.rank() <= 1, op, ": argument 'scalar' has shape ", scalar.shape().str(),
              ", expected [] or [1] (one element)");
  check_dtype_in(op, {"scalar", scalar}, {DType::f32, DType::f64});
  BATON_CHECK(std::isfinite(alpha), op, ": argument 'alpha' is ", alpha, ", expected a finite value");
  // The scalar is read after out is written only if they overlap; forbid that.
  check_overlap(op, {"out", out}, {{"scalar", scalar}}, Overlap::none);
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, x.dtype(), [&]<typename T>() {
          if (scalar.dtype() == DType::f64) {
            cpu::scale_by_scalar(x.data<T>(), scalar.data<double>(), alpha, out.data<T>(), out.numel());
          } else {
            cpu::scale_by_scalar(x.data<T>(), scalar.data<float>(), alpha, out.data<T>(), out.numel());
          }
        });
      },
      [&](auto& cuda_ctx) {
        cuda::scale_by_scalar(cuda_ctx, x.dtype(), x.data_ptr(), scalar.dtype(), scalar.data_ptr(), alpha,
                              out.data_ptr(), out.numel());
      });
}

}  // namespace baton::kernels
