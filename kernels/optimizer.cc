// Optimizer ops: argument checks and device dispatch.
#include "kernels/optimizer.h"

#include <initializer_list>
#include <string_view>

#include "kernels/cpu/optimizer_cpu.h"
#include "kernels/cuda/optimizer_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"
#include "kernels/optimizer_math.h"

namespace baton::kernels {
namespace {

// Every buffer is defined, on the context's device, f32 or f64, and has the first one's shape and dtype.
void check_buffers(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> buffers) {
  check_on_context(op, ctx, buffers);
  check_dtype_in(op, *buffers.begin(), {DType::f32, DType::f64});
  check_same_dtype(op, buffers);
  check_same_shape(op, buffers);
}

// A hyper-parameter: `ok` must hold (false for NaN), else "argument 'name' is value, expected ...".
void check_hyper(std::string_view op, std::string_view name, double value, bool ok, std::string_view expected) {
  BATON_CHECK(ok, op, ": argument '", name, "' is ", value, ", expected ", expected);
}

}  // namespace

void sgd_step(Context& ctx, const Tensor& params, const Tensor& grads, const Tensor& momentum_buf, const SgdParams& p) {
  constexpr std::string_view op = "sgd_step";
  check_hyper(op, "lr", p.lr, p.lr >= 0.0, "lr >= 0");
  check_hyper(op, "momentum", p.momentum, p.momentum >= 0.0, "momentum >= 0");
  check_hyper(op, "dampening", p.dampening, p.dampening >= 0.0 && p.dampening <= 1.0, "a value in [0, 1]");
  check_hyper(op, "weight_decay", p.weight_decay, p.weight_decay >= 0.0, "weight_decay >= 0");
  BATON_CHECK(!p.nesterov || (p.momentum > 0.0 && p.dampening == 0.0), op,
              ": argument 'nesterov' needs momentum > 0 and dampening == 0 (momentum ", p.momentum, ", dampening ",
              p.dampening, ")");
  const bool has_momentum = p.momentum != 0.0;
  BATON_CHECK(!has_momentum || momentum_buf.defined(), op,
              ": argument 'momentum_buf' is an undefined tensor, but momentum is ", p.momentum,
              " (a momentum buffer is needed)");
  if (has_momentum) {
    check_buffers(op, ctx, {{"params", params}, {"grads", grads}, {"momentum_buf", momentum_buf}});
  } else {
    check_buffers(op, ctx, {{"params", params}, {"grads", grads}});
  }
  const int64_t n = params.numel();

  on_device(
      op, ctx,
      [&] {
        dispatch_f32_f64(op, params.dtype(), [&]<typename T>() {
          const SgdUpdate<T> update = make_sgd_update<T>(p);
          if (has_momentum) {
            T* const buffers[] = {params.data<T>(), grads.data<T>(), momentum_buf.data<T>()};
            cpu::sgd_update(buffers, n, update);
          } else {
            T* const buffers[] = {params.data<T>(), grads.data<T>()};
            cpu::sgd_update(buffers, n, update);
          }
        });
      },
      [&](auto& cuda_ctx) {
        cuda::sgd_step(cuda_ctx, params.data_ptr(), grads.data_ptr(), has_momentum ? momentum_buf.data_ptr() : nullptr,
                       params.dtype(), n, p);
      });
}

void adamw_step(Context& ctx, const Tensor& params, const Tensor& grads, const Tensor& exp_avg,
                const Tensor& exp_avg_sq, const AdamWParams& p) {
  constexpr std::string_view op = "adamw_step";
  BATON_CHECK(p.step >= 1, op, ": argument 'step' is ", p.step, ", expected step >= 1 (the first update is step 1)");
  check_hyper(op, "lr", p.lr, p.lr >= 0.0, "lr >= 0");
  check_hyper(op, "beta1", p.beta1, p.beta1 >= 0.0 && p.beta1 < 1.0, "a value in [0, 1)");
  check_hyper(op, "beta2", p.beta2, p.beta2 >= 0.0 && p.beta2 < 1.0, "a value in [0, 1)");
  check_hyper(op, "eps", p.eps, p.eps >= 0.0, "eps >= 0");
  check_hyper(op, "weight_decay", p.weight_decay, p.weight_decay >= 0.0, "weight_decay >= 0");
  check_buffers(op, ctx, {{"params", params}, {"grads", grads}, {"exp_avg", exp_avg}, {"exp_avg_sq", exp_avg_sq}});
  const int64_t n = params.numel();

  on_device(
      op, ctx,
      [&] {
        dispatch_f32_f64(op, params.dtype(), [&]<typename T>() {
          T* const buffers[] = {params.data<T>(), grads.data<T>(), exp_avg.data<T>(), exp_avg_sq.data<T>()};
          cpu::fused_update(buffers, n, make_adamw_update<T>(p));
        });
      },
      [&](auto& cuda_ctx) {
        cuda::adamw_step(cuda_ctx, params.data_ptr(), grads.data_ptr(), exp_avg.data_ptr(), exp_avg_sq.data_ptr(),
                         params.dtype(), n, p);
      });
}

}  // namespace baton::kernels
