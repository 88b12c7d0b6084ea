// Dropout ops: argument checks and device dispatch.
#include "kernels/dropout.h"

#include <string_view>

#include "kernels/cpu/dropout_cpu.h"
#include "kernels/cuda/dropout_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/dropout_math.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

// out = mask(seed, p) · in / (1 - p); `in` and `out` carry the argument names for messages.
void dropout(std::string_view op, Context& ctx, const NamedTensor& in, double p, uint64_t seed,
             const NamedTensor& out) {
  check_pointwise(op, ctx, {in}, out);
  // The mask follows the row-major element index, the same bits on every device: row-major only.
  check_on_context(op, ctx, {in, out});
  BATON_CHECK(p >= 0.0 && p < 1.0, op, ": argument 'p' is ", p, ", expected a drop probability in [0, 1)");
  const Tensor &x = in.tensor, &y = out.tensor;
  if (p == 0.0) {  // every element kept, scaled by 1: a copy (nothing to do in place)
    if (x.data_ptr() != y.data_ptr())
      copy_bytes(y.data_ptr(), y.device(), x.data_ptr(), x.device(), y.nbytes(), ctx.stream());
    return;
  }
  const uint32_t threshold = dropout_threshold(p);
  const double scale = 1.0 / (1.0 - p);
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, x.dtype(), [&]<typename T>() {
          cpu::dropout(x.data<T>(), threshold, scale, seed, y.data<T>(), y.numel());
        });
      },
      [&](auto& cuda_ctx) {
        cuda::dropout(cuda_ctx, x.dtype(), x.data_ptr(), threshold, scale, seed, y.data_ptr(), y.numel());
      });
}

}  // namespace

void dropout_forward(Context& ctx, const Tensor& x, double p, uint64_t seed, const Tensor& out) {
  dropout("dropout_forward", ctx, {"x", x}, p, seed, {"out", out});
}

void dropout_backward(Context& ctx, const Tensor& dy, double p, uint64_t seed, const Tensor& dx) {
  dropout("dropout_backward", ctx, {"dy", dy}, p, seed, {"dx", dx});
}

}  // namespace baton::kernels
