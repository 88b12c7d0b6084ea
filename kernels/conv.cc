// Convolution: shape and argument checks, then the CPU reference (im2col + GEMM) or cuDNN.
#include "kernels/conv.h"

#include <array>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "kernels/bias.h"
#include "kernels/cpu/conv_cpu.h"
#include "runtime/core/build_config.h"  // first: BATON_HAVE_DNNL
#if BATON_HAVE_DNNL
#include "kernels/cpu/conv_dnnl.h"
#endif
#include "kernels/cuda/conv_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/layout.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

void check_params(std::string_view op, const Conv2dParams& p) {
  BATON_CHECK(p.stride[0] >= 1 && p.stride[1] >= 1, op, ": stride ", pair_text(p.stride), " must be at least 1");
  BATON_CHECK(p.padding[0] >= 0 && p.padding[1] >= 0, op, ": padding ", pair_text(p.padding), " must not be negative");
  BATON_CHECK(p.dilation[0] >= 1 && p.dilation[1] >= 1, op, ": dilation ", pair_text(p.dilation),
              " must be at least 1");
  BATON_CHECK(p.groups >= 1, op, ": groups ", p.groups, " must be at least 1");
}

Shape output_shape(std::string_view op, const Shape& x, const Shape& w, const Conv2dParams& p) {
  check_params(op, p);
  BATON_CHECK(x.rank() == 4, op, ": input has shape ", x.str(), ", expected 4 dimensions [N, C, H, W]");
  BATON_CHECK(w.rank() == 4, op, ": filter has shape ", w.str(), ", expected 4 dimensions [K, C / groups, R, S]");
  const int64_t c = x[1], k = w[0];
  BATON_CHECK(c >= 1 && x[2] >= 1 && x[3] >= 1, op, ": input has shape ", x.str(),
              ", expected at least one channel, row and column");
  BATON_CHECK(k >= 1 && w[2] >= 1 && w[3] >= 1, op, ": filter has shape ", w.str(),
              ", expected at least one filter, row and column");
  BATON_CHECK(c % p.groups == 0, op, ": groups ", p.groups, " does not divide the input's ", c, " channels");
  BATON_CHECK(k % p.groups == 0, op, ": groups ", p.groups, " does not divide the filter's ", k, " output channels");
  BATON_CHECK(w[1] == c / p.groups, op, ": filter has shape ", w.str(), ", expected ", c / p.groups,
              " channels in dimension 1 (the input's ", c, " channels / groups ", p.groups, ")");
  int64_t out[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t extent = p.dilation[i] * (w[2 + i] - 1) + 1, padded = x[2 + i] + 2 * p.padding[i];
    BATON_CHECK(extent <= padded, op, ": the ", i == 0 ? "height" : "width", " of the dilated kernel (", extent,
                ") exceeds the padded input's (", padded, ") for input ", x.str(), ", filter ", w.str());
    out[i] = (padded - extent) / p.stride[i] + 1;
  }
  return Shape{x[0], k, out[0], out[1]};
}

// The checks every pass shares: tensors on the context, one dtype (f32 or f64), shapes consistent,
// row-major filters; on the CPU the activations may be channels-last. `x` is the input (dx for
// backward data), `y` the output (dy).
void check_conv(std::string_view op, const Context& ctx, const NamedTensor& x, const NamedTensor& w,
                const NamedTensor& y, const Conv2dParams& p) {
  check_on_context_any_format(op, ctx, {x, y});
  check_on_context(op, ctx, {w});
  if (ctx.device().is_cuda()) check_on_context(op, ctx, {x, y});  // cuDNN gets NCHW
  check_dtype_in(op, x, {DType::f32, DType::f64});
  check_same_dtype(op, {x, w, y});
  const Shape expected = output_shape(op, x.tensor.shape(), w.tensor.shape(), p);
  BATON_CHECK(y.tensor.shape() == expected, op, ": argument '", y.name, "' has shape ", y.tensor.shape().str(),
              ", expected ", expected.str(), " (from '", x.name, "' ", x.tensor.shape().str(), ", '", w.name, "' ",
              w.tensor.shape().str(), ", stride ", pair_text(p.stride), ", padding ", pair_text(p.padding),
              ", dilation ", pair_text(p.dilation), ", groups ", p.groups, ")");
  if (ctx.device().is_cuda()) {
    for (const Shape* s : {&x.tensor.shape(), &w.tensor.shape(), &y.tensor.shape()}) {
      BATON_CHECK(s->numel() <= INT_MAX, op, ": shape ", s->str(), " has more than ", INT_MAX,
                  " elements, too many for cuDNN");
    }
    for (const int64_t v : {p.padding[0], p.padding[1], p.stride[0], p.stride[1], p.dilation[0], p.dilation[1]}) {
      BATON_CHECK(v <= INT_MAX, op, ": convolution parameter ", v, " is too large for cuDNN");
    }
  }
}

cpu::ConvGeometry geometry(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p) {
  return {.n = x[0],
          .c = x[1],
          .h = x[2],
          .w = x[3],
          .k = w[0],
          .r = w[2],
          .s = w[3],
          .p = y[2],
          .q = y[3],
          .stride_h = p.stride[0],
          .stride_w = p.stride[1],
          .pad_h = p.padding[0],
          .pad_w = p.padding[1],
          .dilation_h = p.dilation[0],
          .dilation_w = p.dilation[1],
          .groups = p.groups};
}

// float32 on oneDNN where it has an implementation (true), else nothing (false).
bool run_dnnl([[maybe_unused]] Context& ctx, [[maybe_unused]] Conv2dPass pass,
              [[maybe_unused]] const cpu::ConvGeometry& g, [[maybe_unused]] const Tensor& x,
              [[maybe_unused]] const Tensor& w, [[maybe_unused]] const Tensor& y) {
#if BATON_HAVE_DNNL
  const cpu::Workspace workspace = [&ctx](size_t bytes) { return ctx.workspace(bytes); };
  const cpu::ConvFormats f{.x_channels_last = x.format() == MemoryFormat::channels_last,
                           .y_channels_last = y.format() == MemoryFormat::channels_last};
  switch (pass) {
    case Conv2dPass::forward:
      return cpu::dnnl_conv2d_forward(g, f, x.data<float>(), w.data<float>(), y.data<float>(), workspace);
    case Conv2dPass::backward_data:
      return cpu::dnnl_conv2d_backward_data(g, f, y.data<float>(), w.data<float>(), x.data<float>(), workspace);
    case Conv2dPass::backward_filter:
      return cpu::dnnl_conv2d_backward_filter(g, f, x.data<float>(), y.data<float>(), w.data<float>(), workspace);
  }
#endif
  return false;
}

template <typename T>
void run_reference(Context& ctx, Conv2dPass pass, const cpu::ConvGeometry& g, const Tensor& x, const Tensor& w,
                   const Tensor& y) {
  const size_t column_bytes = static_cast<size_t>(g.column_elements()) * sizeof(T);
  T* columns = column_bytes > 0 ? static_cast<T*>(ctx.workspace(column_bytes)) : nullptr;
  switch (pass) {
    case Conv2dPass::forward:
      return cpu::conv2d_forward(g, x.data<T>(), w.data<T>(), y.data<T>(), columns);
    case Conv2dPass::backward_data:
      return cpu::conv2d_backward_data(g, y.data<T>(), w.data<T>(), x.data<T>(), columns);
    case Conv2dPass::backward_filter:
      return cpu::conv2d_backward_filter(g, x.data<T>(), y.data<T>(), w.data<T>(), columns);
  }
}

// The reference on activations in either format: it reads and writes row-major ones, so
// channels-last ones go through row-major copies (the one it writes converted back).
template <typename T>
void run_reference_any_format(Context& ctx, Conv2dPass pass, const cpu::ConvGeometry& g, const Tensor& x,
                              const Tensor& w, const Tensor& y) {
  const bool writes_x = pass == Conv2dPass::backward_data, writes_y = pass == Conv2dPass::forward;
  const RowMajorOutput x_out(ctx, writes_x ? x : Tensor()), y_out(ctx, writes_y ? y : Tensor());
  run_reference<T>(ctx, pass, g, writes_x ? x_out.tensor() : to_memory_format(ctx, x, MemoryFormat::contiguous), w,
                   writes_y ? y_out.tensor() : to_memory_format(ctx, y, MemoryFormat::contiguous));
  x_out.write_back();
  y_out.write_back();
}

template <typename T>
void run_cpu(Context& ctx, Conv2dPass pass, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dParams& p) {
  const cpu::ConvGeometry g = geometry(x.shape(), w.shape(), y.shape(), p);
  if (std::is_same_v<T, float> && run_dnnl(ctx, pass, g, x, w, y)) return;
  run_reference_any_format<T>(ctx, pass, g, x, w, y);
}

// Unused (and not emitted) in CPU-only builds.
[[maybe_unused]] cuda::ConvArgs conv_args(Conv2dPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
                                          const Conv2dParams& p) {
  return {.pass = pass,
          .dtype = x.dtype(),
          .x = x.shape(),
          .w = w.shape(),
          .y = y.shape(),
          .params = p,
          .x_data = x.data_ptr(),
          .w_data = w.data_ptr(),
          .y_data = y.data_ptr()};
}

// Runs one checked pass on the context's device; x, w, y as in cuda::ConvArgs.
void run_pass(std::string_view op, Context& ctx, Conv2dPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
              const Conv2dParams& p) {
  if (x.size(0) == 0) return;  // an empty batch: no output elements, no gradient contribution
  on_device(
      op, ctx,
      [&] {
        if (x.dtype() == DType::f64) return run_cpu<double>(ctx, pass, x, w, y, p);
        run_cpu<float>(ctx, pass, x, w, y, p);
      },
      [&](auto& cuda_ctx) { cuda::conv2d(cuda_ctx, conv_args(pass, x, w, y, p)); });
}

// A channels-last activation as the [N·H·W, C] matrix it is (the bias ops' [rows, C] case); a
// row-major one as it is.
Tensor channels_innermost(const Tensor& t) {
  if (t.format() != MemoryFormat::channels_last) return t;
  return t.nhwc_view().reshape(Shape{t.size(0) * t.size(2) * t.size(3), t.size(1)});
}

}  // namespace

bool conv2d_takes_channels_last(Device device, DType dtype) { return device.is_cpu() && dtype == DType::f32; }

Shape conv2d_output_shape(const Shape& x, const Shape& w, const Conv2dParams& params) {
  return output_shape("conv2d", x, w, params);
}

void conv2d_forward(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& params,
                    const Tensor& y) {
  constexpr std::string_view op = "conv2d_forward";
  check_conv(op, ctx, {"x", x}, {"w", w}, {"y", y}, params);
  if (bias.defined()) {
    check_on_context(op, ctx, {{"bias", bias}});
    check_same_dtype(op, {{"x", x}, {"bias", bias}});
    BATON_CHECK(bias.shape() == Shape{w.size(0)}, op, ": argument 'bias' has shape ", bias.shape().str(),
                ", expected [", w.size(0), "] (the filter's output channels)");
  }
  run_pass(op, ctx, Conv2dPass::forward, x, w, y, params);
  if (bias.defined()) bias_add(ctx, bias, channels_innermost(y));
}

void conv2d_backward_data(Context& ctx, const Tensor& dy, const Tensor& w, const Conv2dParams& params,
                          const Tensor& dx) {
  constexpr std::string_view op = "conv2d_backward_data";
  check_conv(op, ctx, {"dx", dx}, {"w", w}, {"dy", dy}, params);
  run_pass(op, ctx, Conv2dPass::backward_data, dx, w, dy, params);
}

void conv2d_backward_filter(Context& ctx, const Tensor& x, const Tensor& dy, const Conv2dParams& params,
                            const Tensor& dw) {
  constexpr std::string_view op = "conv2d_backward_filter";
  check_conv(op, ctx, {"x", x}, {"dw", dw}, {"dy", dy}, params);
  run_pass(op, ctx, Conv2dPass::backward_filter, x, dw, dy, params);
}

void conv2d_backward_bias(Context& ctx, const Tensor& dy, const Tensor& db) {
  check_on_context_any_format("conv2d_backward_bias", ctx, {{"dy", dy}});
  check_on_context("conv2d_backward_bias", ctx, {{"db", db}});
  check_rank("conv2d_backward_bias", {"dy", dy}, 4);
  bias_grad(ctx, channels_innermost(dy), db);
}

std::function<void()> conv2d_library_call(Context& ctx, Conv2dPass pass, const Tensor& x, const Tensor& w,
                                          const Tensor& y, const Conv2dParams& params) {
  check_conv("conv2d_library_call", ctx, {"x", x}, {"w", w}, {"y", y}, params);
  BATON_CHECK(x.size(0) > 0, "conv2d_library_call: an empty batch makes no library call");
  return on_device(
      "conv2d_library_call", ctx, [] { return std::function<void()>{}; },
      [&](auto& cuda_ctx) { return cuda::conv2d_library_call(cuda_ctx, conv_args(pass, x, w, y, params)); });
}

}  // namespace baton::kernels
