// Reductions: argument checks, then the CPU reference (double accumulation) or the CUDA launchers.
#include "kernels/reduce.h"

#include <cmath>
#include <string_view>

#include "kernels/cpu/reduce_cpu.h"
#include "kernels/cuda/reduce_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"
#include "runtime/core/enum_table.h"

namespace baton::kernels {
namespace {

std::string_view reduction_name(Reduction reduction) {
  constexpr std::string_view kNames[] = {"sum", "mean", "max", "sum_squares", "l2_norm"};
  const std::string_view name = enum_lookup<Reduction::l2_norm>(reduction, kNames, "");
  BATON_CHECK(!name.empty(), "invalid Reduction value ", static_cast<int>(reduction));
  return name;
}

// x floating on the context's device; out on it too, with the reduction dtype of x.
void check_reduction(std::string_view op, const Context& ctx, const Tensor& x, const Tensor& out) {
  check_on_context(op, ctx, {{"x", x}, {"out", out}});
  check_floating(op, {"x", x});
  const DType expected = reduction_dtype(x.dtype());
  BATON_CHECK(out.dtype() == expected, op, ": argument 'out' has dtype ", dtype_name(out.dtype()), ", expected ",
              dtype_name(expected), " (the result dtype for 'x' of dtype ", dtype_name(x.dtype()), ")");
}

// The result of a reduction over doubles, stored as Acc<T> (float, or double for f64).
template <typename T>
void store_result(double value, const Tensor& out) {
  *out.data<cpu::Acc<T>>() = static_cast<cpu::Acc<T>>(value);
}

}  // namespace

DType reduction_dtype(DType input) { return input == DType::f64 ? DType::f64 : DType::f32; }

void reduce(Context& ctx, const Tensor& x, Reduction reduction, const Tensor& out) {
  const std::string_view op = reduction_name(reduction);
  check_reduction(op, ctx, x, out);
  check_rank(op, {"out", out}, 0);
  const int64_t n = x.numel();
  BATON_CHECK(n > 0 || (reduction != Reduction::mean && reduction != Reduction::max), op,
              ": argument 'x' is empty (shape ", x.shape().str(), "); the ", op, " of no elements is undefined");
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, x.dtype(), [&]<typename T>() {
          const T* xs = x.data<T>();
          switch (reduction) {
            case Reduction::sum:
              return store_result<T>(cpu::sum(xs, n), out);
            case Reduction::mean:
              return store_result<T>(cpu::sum(xs, n) / static_cast<double>(n), out);
            case Reduction::max:
              return store_result<T>(cpu::max(xs, n), out);
            case Reduction::sum_squares:
              return store_result<T>(cpu::sum_squares(xs, n), out);
            case Reduction::l2_norm:
              return store_result<T>(std::sqrt(cpu::sum_squares(xs, n)), out);
          }
        });
      },
      [&](auto& cuda_ctx) {
        void* workspace = cuda_ctx.workspace(cuda::reduce_workspace_bytes(x.dtype(), n));
        cuda::reduce(cuda_ctx, reduction, x.dtype(), x.data_ptr(), n, out.data_ptr(), workspace);
      });
}

void sum(Context& ctx, const Tensor& x, const Tensor& out) { reduce(ctx, x, Reduction::sum, out); }
void mean(Context& ctx, const Tensor& x, const Tensor& out) { reduce(ctx, x, Reduction::mean, out); }
void max(Context& ctx, const Tensor& x, const Tensor& out) { reduce(ctx, x, Reduction::max, out); }
void sum_squares(Context& ctx, const Tensor& x, const Tensor& out) { reduce(ctx, x, Reduction::sum_squares, out); }
void l2_norm(Context& ctx, const Tensor& x, const Tensor& out) { reduce(ctx, x, Reduction::l2_norm, out); }

namespace {

// out[c] = Σ over n, h, w of x (· y when y is defined).
void channel_reduce(std::string_view op, Context& ctx, const Tensor& x, const Tensor* y, const Tensor& out) {
  check_reduction(op, ctx, x, out);
  check_rank(op, {"x", x}, 4);
  if (y != nullptr) {
    check_on_context(op, ctx, {{"y", *y}});
    check_same_shape(op, {{"x", x}, {"y", *y}});
    check_same_dtype(op, {{"x", x}, {"y", *y}});
  }
  const int64_t batch = x.size(0), channels = x.size(1), hw = x.size(2) * x.size(3);
  BATON_CHECK(out.shape() == Shape{channels}, op, ": argument 'out' has shape ", out.shape().str(), ", expected [",
              channels, "] (the channels of 'x', shape ", x.shape().str(), ")");
  const void* y_data = y != nullptr ? y->data_ptr() : nullptr;
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, x.dtype(), [&]<typename T>() {
          cpu::channel_dot(x.data<T>(), static_cast<const T*>(y_data), batch, channels, hw, out.data<cpu::Acc<T>>());
        });
      },
      [&](auto& cuda_ctx) {
        void* workspace = cuda_ctx.workspace(cuda::channel_workspace_bytes(x.dtype(), batch, channels, hw));
        cuda::channel_reduce(cuda_ctx, x.dtype(), x.data_ptr(), y_data, batch, channels, hw, out.data_ptr(), workspace);
      });
}

}  // namespace

void channel_sum(Context& ctx, const Tensor& x, const Tensor& out) {
  channel_reduce("channel_sum", ctx, x, nullptr, out);
}

void channel_dot(Context& ctx, const Tensor& x, const Tensor& y, const Tensor& out) {
  channel_reduce("channel_dot", ctx, x, &y, out);
}

}  // namespace baton::kernels
