// Bias ops: argument checks, then the CPU reference or the CUDA launcher; the gradient composes
// channel_sum, cast and axpy, so it needs no kernel of its own.
#include "kernels/bias.h"

#include <cstdint>
#include <string_view>

#include "kernels/cpu/bias_cpu.h"
#include "kernels/cuda/bias_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/elementwise.h"
#include "kernels/op_checks.h"
#include "kernels/reduce.h"

namespace baton::kernels {
namespace {

// t ([N, C, ...], rank >= 2) and the per-channel tensor b ([C]) on the context's device, one floating dtype.
void check_bias(std::string_view op, const Context& ctx, const NamedTensor& t, const NamedTensor& b) {
  check_on_context(op, ctx, {t, b});
  BATON_CHECK(t.tensor.rank() >= 2, op, ": argument '", t.name, "' has shape ", t.tensor.shape().str(),
              ", expected at least 2 dimensions [N, C, ...]");
  check_floating(op, t);
  check_same_dtype(op, {t, b});
  const int64_t channels = t.tensor.size(1);
  BATON_CHECK(b.tensor.shape() == Shape{channels}, op, ": argument '", b.name, "' has shape ", b.tensor.shape().str(),
              ", expected [", channels, "] (dimension 1 of '", t.name, "', shape ", t.tensor.shape().str(), ")");
}

int64_t inner_size(const Tensor& t) {
  return t.size(0) == 0 || t.size(1) == 0 ? 0 : t.numel() / (t.size(0) * t.size(1));
}

}  // namespace

void bias_add(Context& ctx, const Tensor& bias, const Tensor& out) {
  constexpr std::string_view op = "bias_add";
  check_bias(op, ctx, {"out", out}, {"bias", bias});
  const int64_t batch = out.size(0), channels = out.size(1), inner = inner_size(out);
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, out.dtype(),
                          [&]<typename T>() { cpu::bias_add(bias.data<T>(), batch, channels, inner, out.data<T>()); });
      },
      [&](auto& cuda_ctx) {
        cuda::bias_add(cuda_ctx, out.dtype(), bias.data_ptr(), batch, channels, inner, out.data_ptr());
      });
}

void bias_grad(Context& ctx, const Tensor& dy, const Tensor& db) {
  check_bias("bias_grad", ctx, {"dy", dy}, {"db", db});
  const int64_t channels = dy.size(1);
  const Tensor sums = Tensor::empty(Shape{channels}, reduction_dtype(dy.dtype()), ctx);
  channel_sum(ctx, dy.reshape(Shape{dy.size(0), channels, inner_size(dy), 1}), sums);
  if (sums.dtype() == db.dtype()) return axpy(ctx, 1.0, sums, db);
  const Tensor rounded = Tensor::empty(Shape{channels}, db.dtype(), ctx);
  cast(ctx, sums, rounded);
  axpy(ctx, 1.0, rounded, db);
}

}  // namespace baton::kernels
