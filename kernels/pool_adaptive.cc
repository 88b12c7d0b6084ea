// Global and adaptive average pooling ops: argument checks, then the CPU loops (global pooling
// row-major or channels-last; adaptive windows row-major) or the CUDA launchers.
#include <string_view>

#include "kernels/cpu/pool_channels_last_cpu.h"
#include "kernels/cpu/pool_cpu.h"
#include "kernels/cuda/pool_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"
#include "kernels/pool.h"
#include "kernels/pool_internal.h"
#include "kernels/pool_math.h"

namespace baton::kernels {
namespace {

// `full` is [N, C, H, W] with H·W >= 1 and `pooled` [N, C, 1, 1], of one floating dtype.
void check_global(std::string_view op, const Context& ctx, const NamedTensor& full, const NamedTensor& pooled) {
  check_pool_activations(op, ctx, {full, pooled});
  check_rank(op, full, 4);
  check_dtype_in(op, full, kPoolDtypes);
  check_same_dtype(op, {full, pooled});
  const Shape& s = full.tensor.shape();
  BATON_CHECK(s[2] * s[3] >= 1, op, ": argument '", full.name, "' has shape ", s.str(),
              ", expected planes of at least one element");
  const Shape expected{s[0], s[1], 1, 1};
  BATON_CHECK(pooled.tensor.shape() == expected, op, ": argument '", pooled.name, "' has shape ",
              pooled.tensor.shape().str(), ", expected ", expected.str(), " (one value per plane of '", full.name,
              "', shape ", s.str(), ")");
}

// Global average pooling forward (x to y) or backward (dy to dx), over the planes of x or dx.
void global_avg_pool2d(std::string_view op, Context& ctx, bool forward, const Tensor& source, const Tensor& target) {
  const Tensor& full = forward ? source : target;
  const int64_t hw = full.size(2) * full.size(3);
  on_device_floating(
      op, ctx, full.dtype(),
      [&]<typename T>() {
        if (is_channels_last(full)) {
          const auto cpu_pass = forward ? cpu::global_avg_pool2d_forward_channels_last<T>
                                        : cpu::global_avg_pool2d_backward_channels_last<T>;
          cpu_pass(source.data<T>(), full.size(0), hw, full.size(1), target.data<T>());
        } else {
          const auto cpu_pass = forward ? cpu::global_avg_pool2d_forward<T> : cpu::global_avg_pool2d_backward<T>;
          cpu_pass(source.data<T>(), planes_of(full), hw, target.data<T>());
        }
      },
      [&](auto& cuda_ctx) {
        const auto cuda_pass = forward ? cuda::global_avg_pool2d_forward : cuda::global_avg_pool2d_backward;
        cuda_pass(cuda_ctx, full.dtype(), source.data_ptr(), planes_of(full), hw, target.data_ptr());
      });
}

}  // namespace

void global_avg_pool2d_forward(Context& ctx, const Tensor& x, const Tensor& y) {
  constexpr std::string_view op = "global_avg_pool2d_forward";
  check_global(op, ctx, {"x", x}, {"y", y});
  global_avg_pool2d(op, ctx, true, x, y);
}

void global_avg_pool2d_backward(Context& ctx, const Tensor& dy, const Tensor& dx) {
  constexpr std::string_view op = "global_avg_pool2d_backward";
  check_global(op, ctx, {"dx", dx}, {"dy", dy});
  global_avg_pool2d(op, ctx, false, dy, dx);
}

namespace {

// `full` is [N, C, H, W] and `pooled` [N, C, OH, OW], of one floating dtype, with H, W, OH, OW >= 1;
// channels-last only for a 1 x 1 output (global pooling).
PoolPlane check_adaptive(std::string_view op, const Context& ctx, const NamedTensor& full, const NamedTensor& pooled) {
  check_on_context_any_format(op, ctx, {full, pooled});
  check_rank(op, full, 4);
  check_rank(op, pooled, 4);
  check_dtype_in(op, full, kPoolDtypes);
  check_same_dtype(op, {full, pooled});
  const Shape& s = full.tensor.shape();
  const Shape& o = pooled.tensor.shape();
  BATON_CHECK(s[2] >= 1 && s[3] >= 1, op, ": argument '", full.name, "' has shape ", s.str(),
              ", expected planes of at least one element");
  BATON_CHECK(o[0] == s[0] && o[1] == s[1] && o[2] >= 1 && o[3] >= 1, op, ": argument '", pooled.name, "' has shape ",
              o.str(), ", expected [", s[0], ", ", s[1], ", OH, OW] with OH, OW >= 1 (pooling '", full.name,
              "' of shape ", s.str(), ")");
  PoolPlane p;
  p.in_h = s[2];
  p.in_w = s[3];
  p.out_h = o[2];
  p.out_w = o[3];
  if (p.out_h != 1 || p.out_w != 1) check_on_context(op, ctx, {full, pooled});
  return p;
}

bool is_global(const PoolPlane& p) { return p.out_h == 1 && p.out_w == 1; }

// Adaptive average pooling forward (x to y) or backward (dy to dx), over the planes of x or dx.
void adaptive_avg_pool2d(std::string_view op, Context& ctx, bool forward, const Tensor& source, const Tensor& target,
                         const PoolPlane& p) {
  const Tensor& full = forward ? source : target;
  const auto cpu_pass = [&]<typename T>() {
    const auto pass = forward ? cpu::adaptive_avg_pool2d_forward<T> : cpu::adaptive_avg_pool2d_backward<T>;
    pass(source.data<T>(), planes_of(full), p, target.data<T>());
  };
  on_device_floating(op, ctx, full.dtype(), cpu_pass, [&](auto& cuda_ctx) {
    const auto cuda_pass = forward ? cuda::adaptive_avg_pool2d_forward : cuda::adaptive_avg_pool2d_backward;
    cuda_pass(cuda_ctx, full.dtype(), source.data_ptr(), planes_of(full), p, target.data_ptr());
  });
}

}  // namespace

void adaptive_avg_pool2d_forward(Context& ctx, const Tensor& x, const Tensor& y) {
  constexpr std::string_view op = "adaptive_avg_pool2d_forward";
  const PoolPlane p = check_adaptive(op, ctx, {"x", x}, {"y", y});
  if (is_global(p)) return global_avg_pool2d_forward(ctx, x, y);
  adaptive_avg_pool2d(op, ctx, true, x, y, p);
}

void adaptive_avg_pool2d_backward(Context& ctx, const Tensor& dy, const Tensor& dx) {
  constexpr std::string_view op = "adaptive_avg_pool2d_backward";
  const PoolPlane p = check_adaptive(op, ctx, {"dx", dx}, {"dy", dy});
  if (is_global(p)) return global_avg_pool2d_backward(ctx, dy, dx);
  adaptive_avg_pool2d(op, ctx, false, dy, dx, p);
}

}  // namespace baton::kernels
