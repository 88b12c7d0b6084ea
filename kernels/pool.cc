// Pooling ops with a window (max and average): geometry and argument checks, then the CPU loops
// (row-major or channels-last) or the CUDA launchers.
#include "kernels/pool.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#include "kernels/cpu/pool_channels_last_cpu.h"
#include "kernels/cpu/pool_cpu.h"
#include "kernels/cuda/pool_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"
#include "kernels/pool_internal.h"
#include "kernels/pool_math.h"

namespace baton::kernels {
namespace {

// The geometry resolved for input planes [in_h, in_w] and output planes [out_h, out_w].
PoolPlane make_plane(const Pool2dGeometry& g, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w) {
  PoolPlane p;
  p.in_h = in_h;
  p.in_w = in_w;
  p.out_h = out_h;
  p.out_w = out_w;
  p.kernel_h = g.kernel[0];
  p.kernel_w = g.kernel[1];
  p.stride_h = g.stride[0];
  p.stride_w = g.stride[1];
  p.pad_h = g.padding[0];
  p.pad_w = g.padding[1];
  p.dilation_h = g.dilation[0];
  p.dilation_w = g.dilation[1];
  return p;
}

// The plane geometry of a pooling op between an input of shape `input` (checked: 4-D) and its output
// `output` (checked: the shape pool2d_output_shape gives), naming `output_name` on a mismatch.
PoolPlane check_pool_shapes(std::string_view op, const NamedTensor& input, const NamedTensor& output,
                            const Pool2dGeometry& g) {
  check_rank(op, input, 4);
  const Shape expected = pool2d_output_shape(op, input.tensor.shape(), g);
  BATON_CHECK(output.tensor.shape() == expected, op, ": argument '", output.name, "' has shape ",
              output.tensor.shape().str(), ", expected ", expected.str(), " (pooling '", input.name, "' of shape ",
              input.tensor.shape().str(), ")");
  return make_plane(g, input.tensor.size(2), input.tensor.size(3), expected[2], expected[3]);
}

// Max-pool indices: i32 or i64 of the output's shape, and i32 only when every plane index fits.
void check_indices(std::string_view op, const Tensor& indices, const Shape& output_shape, const PoolPlane& p) {
  check_dtype_in(op, {"indices", indices}, {DType::i32, DType::i64});
  BATON_CHECK(indices.shape() == output_shape, op, ": argument 'indices' has shape ", indices.shape().str(),
              ", expected ", output_shape.str(), " (the pooled shape)");
  BATON_CHECK(indices.dtype() == DType::i64 || p.in_h * p.in_w <= std::numeric_limits<int32_t>::max(), op,
              ": argument 'indices' is i32 but planes of ", p.in_h, " x ", p.in_w, " elements need i64");
}

// Max pooling's checks between x or dx (`full`) and the pooled y or dy, with the indices of the
// maxima; returns the plane geometry.
PoolPlane check_max_pool(std::string_view op, const Context& ctx, const NamedTensor& full, const NamedTensor& pooled,
                         const Tensor& indices, const Pool2dGeometry& g) {
  check_pool_activations(op, ctx, {full, pooled, {"indices", indices}});
  check_dtype_in(op, full, kPoolDtypes);
  check_same_dtype(op, {full, pooled});
  const PoolPlane p = check_pool_shapes(op, full, pooled, g);
  check_indices(op, indices, pooled.tensor.shape(), p);
  return p;
}

void check_no_dilation(std::string_view op, const Pool2dGeometry& g) {
  BATON_CHECK(g.dilation[0] == 1 && g.dilation[1] == 1, op, ": dilation ", pair_text(g.dilation),
              " is not supported (average pooling has no dilation; expected [1, 1])");
}

// Average pooling forward (x to y) or backward (dy to dx): the checks between x or dx and the
// pooled y or dy, then the CPU loop or the CUDA launcher over the planes of x or dx.
void avg_pool2d(std::string_view op, Context& ctx, bool forward, const NamedTensor& source, const NamedTensor& target,
                const Pool2dGeometry& g, bool count_include_pad) {
  const NamedTensor& full = forward ? source : target;
  const NamedTensor& pooled = forward ? target : source;
  check_on_context(op, ctx, {source, target});
  check_dtype_in(op, full, kPoolDtypes);
  check_same_dtype(op, {full, pooled});
  check_no_dilation(op, g);
  const PoolPlane p = check_pool_shapes(op, full, pooled, g);
  const Tensor& in = source.tensor;
  const Tensor& out = target.tensor;
  const auto cpu_pass = [&]<typename T>() {
    const auto pass = forward ? cpu::avg_pool2d_forward<T> : cpu::avg_pool2d_backward<T>;
    pass(in.data<T>(), planes_of(full.tensor), p, count_include_pad, out.data<T>());
  };
  on_device_floating(op, ctx, full.tensor.dtype(), cpu_pass, [&](auto& cuda_ctx) {
    const auto cuda_pass = forward ? cuda::avg_pool2d_forward : cuda::avg_pool2d_backward;
    cuda_pass(cuda_ctx, full.tensor.dtype(), in.data_ptr(), planes_of(full.tensor), p, count_include_pad,
              out.data_ptr());
  });
}

}  // namespace

void check_pool_geometry(std::string_view what, const Pool2dGeometry& g) {
  const auto check_positive = [&](const std::array<int64_t, 2>& v, std::string_view field) {
    BATON_CHECK(v[0] >= 1 && v[1] >= 1, what, ": ", field, " ", pair_text(v), " must be at least 1");
  };
  check_positive(g.kernel, "kernel_size");
  check_positive(g.stride, "stride");
  check_positive(g.dilation, "dilation");
  BATON_CHECK(g.padding[0] >= 0 && g.padding[1] >= 0, what, ": padding ", pair_text(g.padding),
              " must not be negative");
  BATON_CHECK(g.padding[0] <= g.kernel[0] / 2 && g.padding[1] <= g.kernel[1] / 2, what, ": padding ",
              pair_text(g.padding), " must be at most half the kernel_size ", pair_text(g.kernel), " (as in PyTorch)");
}

int64_t pool_output_size(int64_t input, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                         bool ceil_mode) {
  const int64_t span = input + 2 * padding - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // Floor division (span may be negative for too small an input).
  int64_t size = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  // With ceil_mode the last window must start inside the input or its leading padding.
  if (ceil_mode && (size - 1) * stride >= input + padding) --size;
  return size;
}

Shape pool2d_output_shape(std::string_view what, const Shape& input, const Pool2dGeometry& g) {
  BATON_CHECK(input.rank() == 4, what, ": input has shape ", input.str(), ", expected 4 dimensions [N, C, H, W]");
  check_pool_geometry(what, g);
  const int64_t out_h = pool_output_size(input[2], g.kernel[0], g.stride[0], g.padding[0], g.dilation[0], g.ceil_mode);
  const int64_t out_w = pool_output_size(input[3], g.kernel[1], g.stride[1], g.padding[1], g.dilation[1], g.ceil_mode);
  BATON_CHECK(out_h >= 1 && out_w >= 1, what, ": input of shape ", input.str(), " is too small for kernel_size ",
              pair_text(g.kernel), ", stride ", pair_text(g.stride), ", padding ", pair_text(g.padding), ", dilation ",
              pair_text(g.dilation), ": the output would be ", out_h, " x ", out_w);
  return Shape{input[0], input[1], out_h, out_w};
}

void max_pool2d_forward(Context& ctx, const Tensor& x, const Pool2dGeometry& g, const Tensor& y,
                        const Tensor& indices) {
  constexpr std::string_view op = "max_pool2d_forward";
  const PoolPlane p = check_max_pool(op, ctx, {"x", x}, {"y", y}, indices, g);
  on_device_floating_labels(
      op, ctx, x.dtype(), indices.dtype(),
      [&]<typename T, typename I>() {
        if (is_channels_last(x)) {
          cpu::max_pool2d_forward_channels_last(x.data<T>(), x.size(0), x.size(1), p, y.data<T>(), indices.data<I>());
        } else {
          cpu::max_pool2d_forward(x.data<T>(), planes_of(x), p, y.data<T>(), indices.data<I>());
        }
      },
      [&](auto& cuda_ctx) {
        cuda::max_pool2d_forward(cuda_ctx, x.dtype(), indices.dtype(), x.data_ptr(), planes_of(x), p, y.data_ptr(),
                                 indices.data_ptr());
      });
}

void max_pool2d_backward(Context& ctx, const Tensor& dy, const Tensor& indices, const Pool2dGeometry& g,
                         const Tensor& dx) {
  constexpr std::string_view op = "max_pool2d_backward";
  const PoolPlane p = check_max_pool(op, ctx, {"dx", dx}, {"dy", dy}, indices, g);
  on_device_floating_labels(
      op, ctx, dx.dtype(), indices.dtype(),
      [&]<typename T, typename I>() {
        if (is_channels_last(dx)) {
          cpu::max_pool2d_backward_channels_last(dy.data<T>(), indices.data<I>(), dx.size(0), dx.size(1), p,
                                                 dx.data<T>());
        } else {
          cpu::max_pool2d_backward(dy.data<T>(), indices.data<I>(), planes_of(dx), p, dx.data<T>());
        }
      },
      [&](auto& cuda_ctx) {
        cuda::max_pool2d_backward(cuda_ctx, dx.dtype(), indices.dtype(), dy.data_ptr(), indices.data_ptr(),
                                  planes_of(dx), p, dx.data_ptr());
      });
}

void avg_pool2d_forward(Context& ctx, const Tensor& x, const Pool2dGeometry& g, bool count_include_pad,
                        const Tensor& y) {
  avg_pool2d("avg_pool2d_forward", ctx, true, {"x", x}, {"y", y}, g, count_include_pad);
}

void avg_pool2d_backward(Context& ctx, const Tensor& dy, const Pool2dGeometry& g, bool count_include_pad,
                         const Tensor& dx) {
  avg_pool2d("avg_pool2d_backward", ctx, false, {"dy", dy}, {"dx", dx}, g, count_include_pad);
}

}  // namespace baton::kernels
