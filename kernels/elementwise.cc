// Elementwise ops: argument checks, then the CPU reference or the CUDA launchers.
#include "kernels/elementwise.h"

#include <string_view>

#include "kernels/cpu/elementwise_cpu.h"
#include "kernels/cuda/elementwise_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/layout.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

// src -> out as bytes on the context's stream (a device-to-device copy on CUDA); nothing in place.
void copy_checked(const Context& ctx, const Tensor& src, const Tensor& out) {
  if (src.data_ptr() == out.data_ptr()) return;
  copy_bytes(out.data_ptr(), out.device(), src.data_ptr(), src.device(), out.nbytes(), ctx.stream());
}

enum class Arith { add, sub, mul };

// out = a (+ - *) b.
void arith(std::string_view op, Arith kind, Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out) {
  check_pointwise(op, ctx, {{"a", a}, {"b", b}}, {"out", out});
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, a.dtype(), [&]<typename T>() {
          const auto run = kind == Arith::add ? cpu::add<T> : kind == Arith::sub ? cpu::sub<T> : cpu::mul<T>;
          run(a.data<T>(), b.data<T>(), out.data<T>(), out.numel());
        });
      },
      [&](auto& cuda_ctx) {
        const auto launch = kind == Arith::add ? cuda::add : kind == Arith::sub ? cuda::sub : cuda::mul;
        launch(cuda_ctx, a.dtype(), a.data_ptr(), b.data_ptr(), out.data_ptr(), out.numel());
      });
}

}  // namespace

void add(Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out) {
  arith("add", Arith::add, ctx, a, b, out);
}
Tensor sum_in_format_of(Context& ctx, const Tensor& a, const Tensor& b) {
  Tensor sum = Tensor::empty(a.shape(), a.dtype(), ctx.stream(), a.format());
  add(ctx, a, to_memory_format(ctx, b, a.format()), sum);
  return sum;
}
void sub(Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out) {
  arith("sub", Arith::sub, ctx, a, b, out);
}
void mul(Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out) {
  arith("mul", Arith::mul, ctx, a, b, out);
}

void scale(Context& ctx, const Tensor& x, double alpha, const Tensor& out) {
  check_pointwise("scale", ctx, {{"x", x}}, {"out", out});
  on_device(
      "scale", ctx,
      [&] {
        dispatch_floating("scale", x.dtype(),
                          [&]<typename T>() { cpu::scale(x.data<T>(), alpha, out.data<T>(), out.numel()); });
      },
      [&](auto& cuda_ctx) { cuda::scale(cuda_ctx, x.dtype(), x.data_ptr(), alpha, out.data_ptr(), out.numel()); });
}

void axpy(Context& ctx, double alpha, const Tensor& x, const Tensor& y) {
  check_pointwise("axpy", ctx, {{"x", x}, {"y", y}}, {"y", y});
  // y = alpha·x + 1·y: multiplying by 1 is exact, so axpby computes axpy.
  on_device(
      "axpy", ctx,
      [&] {
        dispatch_floating("axpy", x.dtype(), [&]<typename T>() {
          cpu::axpby(alpha, x.data<T>(), 1.0, y.data<T>(), y.data<T>(), y.numel());
        });
      },
      [&](auto& cuda_ctx) {
        cuda::axpby(cuda_ctx, x.dtype(), alpha, x.data_ptr(), 1.0, y.data_ptr(), y.data_ptr(), y.numel());
      });
}

void axpby(Context& ctx, double alpha, const Tensor& x, double beta, const Tensor& y, const Tensor& out) {
  check_pointwise("axpby", ctx, {{"x", x}, {"y", y}}, {"out", out});
  on_device(
      "axpby", ctx,
      [&] {
        dispatch_floating("axpby", x.dtype(), [&]<typename T>() {
          cpu::axpby(alpha, x.data<T>(), beta, y.data<T>(), out.data<T>(), out.numel());
        });
      },
      [&](auto& cuda_ctx) {
        cuda::axpby(cuda_ctx, x.dtype(), alpha, x.data_ptr(), beta, y.data_ptr(), out.data_ptr(), out.numel());
      });
}

void relu_forward(Context& ctx, const Tensor& x, const Tensor& out) {
  check_pointwise("relu_forward", ctx, {{"x", x}}, {"out", out});
  on_device(
      "relu_forward", ctx,
      [&] {
        dispatch_floating("relu_forward", x.dtype(),
                          [&]<typename T>() { cpu::relu_forward(x.data<T>(), out.data<T>(), out.numel()); });
      },
      [&](auto& cuda_ctx) { cuda::relu_forward(cuda_ctx, x.dtype(), x.data_ptr(), out.data_ptr(), out.numel()); });
}

void relu_backward(Context& ctx, const Tensor& y, const Tensor& dy, const Tensor& dx) {
  check_pointwise("relu_backward", ctx, {{"y", y}, {"dy", dy}}, {"dx", dx});
  on_device(
      "relu_backward", ctx,
      [&] {
        dispatch_floating("relu_backward", y.dtype(), [&]<typename T>() {
          cpu::relu_backward(y.data<T>(), dy.data<T>(), dx.data<T>(), dx.numel());
        });
      },
      [&](auto& cuda_ctx) {
        cuda::relu_backward(cuda_ctx, y.dtype(), y.data_ptr(), dy.data_ptr(), dx.data_ptr(), dx.numel());
      });
}

void fill(Context& ctx, const Tensor& out, double value) {
  check_on_context("fill", ctx, {{"out", out}});
  Tensor handle = out;
  handle.fill(value, ctx.stream());
}

void copy(Context& ctx, const Tensor& src, const Tensor& out) {
  check_on_context("copy", ctx, {{"src", src}, {"out", out}});
  check_same_shape("copy", {{"src", src}, {"out", out}});
  check_same_dtype("copy", {{"src", src}, {"out", out}});
  check_overlap("copy", {"out", out}, {{"src", src}}, Overlap::exact_or_none);
  copy_checked(ctx, src, out);
}

void cast(Context& ctx, const Tensor& src, const Tensor& out) {
  check_on_context("cast", ctx, {{"src", src}, {"out", out}});
  check_same_shape("cast", {{"src", src}, {"out", out}});
  check_floating("cast", {"src", src});
  check_floating("cast", {"out", out});
  check_overlap("cast", {"out", out}, {{"src", src}}, Overlap::exact_or_none);
  if (src.dtype() == out.dtype()) return copy_checked(ctx, src, out);
  on_device(
      "cast", ctx,
      [&] {
        dispatch_floating("cast", src.dtype(), [&]<typename S>() {
          dispatch_floating("cast", out.dtype(),
                            [&]<typename D>() { cpu::cast(src.data<S>(), out.data<D>(), out.numel()); });
        });
      },
      [&](auto& cuda_ctx) {
        cuda::cast(cuda_ctx, src.dtype(), src.data_ptr(), out.dtype(), out.data_ptr(), out.numel());
      });
}

}  // namespace baton::kernels
