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

}  // namespace

void global_avg_pool2d_forward(Context& ctx, const Tensor& x, const Tensor& y) {
  constexpr std::string_view op = "global_avg_pool2d_forward";
  check_global(op, ctx, {"x", x}, {"y", y});
  const int64_t hw = x.size(2) * x.size(3);
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, x.dtype(), [&]<typename T>() {
          if (is_channels_last(x)) {
            cpu::global_avg_pool2d_forward_channels_last(x.data<T>(), x.size(0), hw, x.size(1), y.data<T>());
          } else {
            cpu::global_avg_pool2d_forward(x.data<T>(), planes_of(x), hw, y.data<T>());
          }
        });
      },
      [&](auto& cuda_ctx) {
        cuda::global_avg_pool2d_forward(cuda_ctx, x.dtype(), x.data_ptr(), planes_of(x), hw, y.data_ptr());
      });
}

void global_avg_pool2d_backward(Context& ctx, const Tensor& dy, const Tensor& dx) {
  constexpr std::string_view op = "global_avg_pool2d_backward";
  check_global(op, ctx, {"dx", dx}, {"dy", dy});
  const int64_t hw = dx.size(2) * dx.size(3);
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, dx.dtype(), [&]<typename T>() {
          if (is_channels_last(dx)) {
            cpu::global_avg_pool2d_backward_channels_last(dy.data<T>(), dx.size(0), hw, dx.size(1), dx.data<T>());
          } else {
            cpu::global_avg_pool2d_backward(dy.data<T>(), planes_of(dx), hw, dx.data<T>());
          }
        });
      },
      [&](auto& cuda_ctx) {
        cuda::global_avg_pool2d_backward(cuda_ctx, dx.dtype(), dy.data_ptr(), planes_of(dx), hw, dx.data_ptr());
      });
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

}  // namespace

void adaptive_avg_pool2d_forward(Context& ctx, const Tensor& x, const Tensor& y) {
  constexpr std::string_view op = "adaptive_avg_pool2d_forward";
  const PoolPlane p = check_adaptive(op, ctx, {"x", x}, {"y", y});
  if (is_global(p)) return global_avg_pool2d_forward(ctx, x, y);
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, x.dtype(), [&]<typename T>() {
          cpu::adaptive_avg_pool2d_forward(x.data<T>(), planes_of(x), p, y.data<T>());
        });
      },
      [&](auto& cuda_ctx) {
        cuda::adaptive_avg_pool2d_forward(cuda_ctx, x.dtype(), x.data_ptr(), planes_of(x), p, y.data_ptr());
      });
}

void adaptive_avg_pool2d_backward(Context& ctx, const Tensor& dy, const Tensor& dx) {
  constexpr std::string_view op = "adaptive_avg_pool2d_backward";
  const PoolPlane p = check_adaptive(op, ctx, {"dx", dx}, {"dy", dy});
  if (is_global(p)) return global_avg_pool2d_backward(ctx, dy, dx);
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, dx.dtype(), [&]<typename T>() {
          cpu::adaptive_avg_pool2d_backward(dy.data<T>(), planes_of(dx), p, dx.data<T>());
        });
      },
      [&](auto& cuda_ctx) {
        cuda::adaptive_avg_pool2d_backward(cuda_ctx, dx.dtype(), dy.data_ptr(), planes_of(dx), p, dx.data_ptr());
      });
}

}  // namespace baton::kernels
