// Layout ops: argument checks and device dispatch.
#include "kernels/layout.h"

#include <cstdint>
#include <string_view>

#include "kernels/cpu/layout_cpu.h"
#include "kernels/cuda/layout_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

// Checks x (rank 4) and out (x's dtype, shape `expected`), then moves x [batches, rows, cols] to
// out [batches, cols, rows].
void transpose_op(std::string_view op, Context& ctx, const Tensor& x, const Tensor& out, const Shape& expected,
                  int64_t rows, int64_t cols) {
  check_on_context(op, ctx, {{"x", x}, {"out", out}});
  check_same_dtype(op, {{"x", x}, {"out", out}});
  BATON_CHECK(out.shape() == expected, op, ": argument 'out' has shape ", out.shape().str(), ", expected ",
              expected.str());
  const int64_t batches = x.size(0);
  on_device(
      op, ctx,
      [&] { cpu::batched_transpose(x.data_ptr(), dtype_size(x.dtype()), batches, rows, cols, out.data_ptr()); },
      [&](auto& cuda_ctx) {
        cuda::batched_transpose(cuda_ctx, x.data_ptr(), dtype_size(x.dtype()), batches, rows, cols, out.data_ptr());
      });
}

}  // namespace

void nchw_to_nhwc(Context& ctx, const Tensor& x, const Tensor& out) {
  constexpr std::string_view op = "nchw_to_nhwc";
  check_on_context(op, ctx, {{"x", x}});
  check_rank(op, {"x", x}, 4);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  transpose_op(op, ctx, x, out, Shape{n, h, w, c}, c, h * w);
}

void nhwc_to_nchw(Context& ctx, const Tensor& x, const Tensor& out) {
  constexpr std::string_view op = "nhwc_to_nchw";
  check_on_context(op, ctx, {{"x", x}});
  check_rank(op, {"x", x}, 4);
  const int64_t n = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
  transpose_op(op, ctx, x, out, Shape{n, c, h, w}, h * w, c);
}

Tensor to_memory_format(Context& ctx, const Tensor& x, MemoryFormat format) {
  constexpr std::string_view op = "to_memory_format";
  if (x.defined() && x.format() == format) return x;  // nothing to move, nothing to check
  check_on_context_any_format(op, ctx, {{"x", x}});
  if (same_placement(x.shape(), x.format(), format)) return x.as_format(format);
  check_rank(op, {"x", x}, 4);
  const Tensor out = Tensor::empty(x.shape(), x.dtype(), ctx.stream(), format);
  convert_into(ctx, x, out);
  return out;
}

void convert_into(Context& ctx, const Tensor& src, const Tensor& out) {
  constexpr std::string_view op = "convert_into";
  check_on_context_any_format(op, ctx, {{"src", src}, {"out", out}});
  check_same_shape(op, {{"src", src}, {"out", out}});
  check_same_dtype(op, {{"src", src}, {"out", out}});
  if (same_placement(src.shape(), src.format(), out.format())) {
    Tensor(out).copy_from(src.as_format(out.format()), ctx.stream());
  } else if (out.format() == MemoryFormat::channels_last) {
    nchw_to_nhwc(ctx, src, out.nhwc_view());
  } else {
    nhwc_to_nchw(ctx, src.nhwc_view(), out);
  }
}

RowMajorOutput::RowMajorOutput(Context& ctx, const Tensor& out) : ctx_(ctx), out_(out), row_major_(out) {
  if (out.defined() && out.format() != MemoryFormat::contiguous) {
    row_major_ = Tensor::empty(out.shape(), out.dtype(), ctx.stream());
  }
}

void RowMajorOutput::write_back() const {
  if (row_major_.defined() && row_major_.data_ptr() != out_.data_ptr()) convert_into(ctx_, row_major_, out_);
}

}  // namespace baton::kernels
