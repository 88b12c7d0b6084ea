// Pooling ops over NCHW tensors: 2-D max and average pooling with PyTorch's window geometry
// (torch.nn.functional.max_pool2d / avg_pool2d), adaptive average pooling to any output size
// (adaptive_avg_pool2d) and its 1x1 case, global average pooling.
//
// Tensors are f32, f64, f16 or bf16 (one dtype per call; max-pool indices are i32 or i64). Sums are
// taken in double on the CPU and in float (double for f64) on CUDA; maxima are exact. Backward ops
// gather: every input element adds up, in a fixed order, the gradients of the windows that cover
// it, so results are the same bits on every run (no atomics).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// Window geometry of a 2-D pooling op; each pair is {height, width}. Along an axis, output position
// o looks at input positions o·stride − padding + k·dilation for k in [0, kernel); positions outside
// the input are padding. As in PyTorch: kernel, stride and dilation >= 1 and 0 <= padding <=
// kernel / 2.
struct Pool2dGeometry {
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  // Output sizes round up instead of down, keeping only windows that start inside the input or its
  // leading padding.
  bool ceil_mode = false;
};

// Throws a baton::Error starting with `what` and naming the field (kernel_size, stride, padding,
// dilation) when the geometry breaks the rules above.
void check_pool_geometry(std::string_view what, const Pool2dGeometry& geometry);

// The output size along one axis (PyTorch's pooling_output_shape): with L = input + 2·padding −
// dilation·(kernel − 1) − 1, floor(L / stride) + 1, or with ceil_mode ceil(L / stride) + 1 less one
// when the last window would start beyond input + padding. May be < 1 for too small an input.
int64_t pool_output_size(int64_t input, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                         bool ceil_mode);

// [N, C, OH, OW] for an input shape [N, C, H, W]; throws a baton::Error starting with `what` when the
// input is not 4-D, the geometry is invalid, or an output size is < 1.
Shape pool2d_output_shape(std::string_view what, const Shape& input, const Pool2dGeometry& geometry);

// y [N, C, OH, OW] = the maximum over each window of x [N, C, H, W]; indices (same shape, i32 or i64)
// = h·W + w of the element chosen within its plane (PyTorch's return_indices). NaN wins (the last
// NaN of a window); among equal values the first in row-major order. A window lying wholly in the
// padding (possible with dilation) gives -inf and index -1.
void max_pool2d_forward(Context& ctx, const Tensor& x, const Pool2dGeometry& geometry, const Tensor& y,
                        const Tensor& indices);
// dx [N, C, H, W] (written in full) = the sum of dy over the windows whose index chose each element.
void max_pool2d_backward(Context& ctx, const Tensor& dy, const Tensor& indices, const Pool2dGeometry& geometry,
                         const Tensor& dx);

// y = the mean of each window of x (geometry.dilation must be 1). The divisor is the window's size
// clipped to the padded input (count_include_pad) or the number of taps inside the input; a window
// with no tap inside the input gives 0 (as in PyTorch).
void avg_pool2d_forward(Context& ctx, const Tensor& x, const Pool2dGeometry& geometry, bool count_include_pad,
                        const Tensor& y);
// dx [N, C, H, W] = the sum over the windows covering each element of dy / divisor.
void avg_pool2d_backward(Context& ctx, const Tensor& dy, const Pool2dGeometry& geometry, bool count_include_pad,
                         const Tensor& dx);

// y [N, C, 1, 1] = the mean of each H x W plane of x [N, C, H, W] (H·W >= 1).
void global_avg_pool2d_forward(Context& ctx, const Tensor& x, const Tensor& y);
// dx [N, C, H, W] = dy [N, C, 1, 1] / (H·W), broadcast over each plane.
void global_avg_pool2d_backward(Context& ctx, const Tensor& dy, const Tensor& dx);

// y [N, C, OH, OW] = torch.nn.functional.adaptive_avg_pool2d of x [N, C, H, W] to y's size (OH, OW,
// H, W >= 1): output (oh, ow) is the mean of rows [floor(oh·H/OH), ceil((oh+1)·H/OH)) and columns
// [floor(ow·W/OW), ceil((ow+1)·W/OW)) of its plane (windows may overlap, or repeat rows when the
// output is larger than the input). A 1 x 1 output takes global_avg_pool2d_forward's path.
void adaptive_avg_pool2d_forward(Context& ctx, const Tensor& x, const Tensor& y);
// dx [N, C, H, W] (written in full) = the sum over the windows covering each element of dy / the
// window's size. A 1 x 1 dy takes global_avg_pool2d_backward's path.
void adaptive_avg_pool2d_backward(Context& ctx, const Tensor& dy, const Tensor& dx);

}  // namespace baton::kernels
