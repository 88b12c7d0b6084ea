// The bare cuDNN / cuBLAS calls of `baton bench layers`, made through the ops' *_library_call.
#include <functional>
#include <vector>

#include "kernels/batch_norm.h"
#include "kernels/conv.h"
#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "layers/batch_norm.h"
#include "layers/conv.h"
#include "tools/bench_layers_workload.h"

namespace baton::cli {
namespace {

DirectCalls conv_direct_calls(Context& ctx, const Workload& w) {
  const auto& conv = dynamic_cast<const layers::Conv2d&>(*w.layer);
  const Tensor &x = w.inputs[0], &weight = w.params[0];
  DirectCalls d;
  const Tensor y = Tensor::empty(w.dy.shape(), DType::f32, ctx), dx = Tensor::empty(x.shape(), DType::f32, ctx);
  const Tensor dw = Tensor::empty(weight.shape(), DType::f32, ctx);
  d.buffers = {y, dx, dw};
  using kernels::Conv2dPass;
  d.forward = kernels::conv2d_library_call(ctx, Conv2dPass::forward, x, weight, y, conv.params());
  if (!d.forward) return d;
  auto filter = kernels::conv2d_library_call(ctx, Conv2dPass::backward_filter, x, dw, w.dy, conv.params());
  std::function<void()> data;
  if (w.needs_input_grad)
    data = kernels::conv2d_library_call(ctx, Conv2dPass::backward_data, dx, weight, w.dy, conv.params());
  d.backward = [data, filter] {
    if (data) data();
    filter();
  };
  return d;
}

DirectCalls linear_direct_calls(Context& ctx, const Workload& w) {
  const Tensor &x = w.inputs[0], &weight = w.params[0];
  DirectCalls d;
  const Tensor y = Tensor::empty(w.dy.shape(), DType::f32, ctx), dx = Tensor::empty(x.shape(), DType::f32, ctx);
  const Tensor dw = Tensor::empty(weight.shape(), DType::f32, ctx);
  d.buffers = {y, dx, dw};
  d.forward = kernels::matmul_library_call(ctx, x, weight, y, false, true);
  if (!d.forward) return d;
  auto data = kernels::matmul_library_call(ctx, w.dy, weight, dx, false, false);
  auto filter = kernels::matmul_library_call(ctx, w.dy, x, dw, true, false, 1.0, 1.0);
  d.backward = [data, filter] {
    data();
    filter();
  };
  return d;
}

DirectCalls batch_norm_direct_calls(Context& ctx, const Workload& w) {
  const layers::BatchNorm2dOptions& options = dynamic_cast<const layers::BatchNorm2d&>(*w.layer).options();
  const Tensor& x = w.inputs[0];
  const Shape channels{x.size(1)};
  const auto filled = [&](const Shape& shape, double value) {
    Tensor t = Tensor::empty(shape, DType::f32, ctx);
    kernels::fill(ctx, t, value);
    return t;
  };
  const kernels::BatchNormTensors t{.x = x,
                                    .weight = w.params[0],
                                    .bias = w.params[1],
                                    .y = filled(x.shape(), 0.0),
                                    .save_mean = filled(channels, 0.0),
                                    .save_invstd = filled(channels, 1.0),
                                    .running_mean = filled(channels, 0.0),
                                    .running_var = filled(channels, 1.0),
                                    .dy = w.dy,
                                    .dx = filled(x.shape(), 0.0),
                                    .weight_grad = filled(channels, 0.0),
                                    .bias_grad = filled(channels, 0.0)};
  DirectCalls d;
  d.buffers = {t.y, t.save_mean, t.save_invstd, t.running_mean, t.running_var, t.dx, t.weight_grad, t.bias_grad};
  using kernels::BatchNormPass;
  d.forward = kernels::batch_norm_library_call(ctx, BatchNormPass::forward_train, t, options.eps, options.momentum);
  // Backward reads the saved statistics the forward call writes (it is timed first).
  if (d.forward) d.backward = kernels::batch_norm_library_call(ctx, BatchNormPass::backward_train, t, options.eps);
  return d;
}

}  // namespace

DirectCalls direct_calls(Context& ctx, const Workload& w) {
  switch (w.kind) {
    case WorkloadKind::conv:
      return conv_direct_calls(ctx, w);
    case WorkloadKind::linear:
      return linear_direct_calls(ctx, w);
    case WorkloadKind::batch_norm:
      return batch_norm_direct_calls(ctx, w);
  }
  return {};
}

}  // namespace baton::cli
