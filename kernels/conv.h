// 2-D convolution (cross-correlation, as PyTorch's conv2d) on NCHW tensors: forward, the gradients
// with respect to the input, the filter and the bias, and the output shape.
//
// Shapes: x [N, C, H, W], w [K, C / groups, R, S], y [N, K, P, Q] with
//   P = (H + 2·padding[0] - dilation[0]·(R - 1) - 1) / stride[0] + 1 (Q likewise with index 1).
// dtypes: f32 and f64 (all tensors of a call the same).
//
// CPU: f32 on oneDNN where the build has it (primitives cached per pass and shape; reordered copies
// and scratchpad from ctx.workspace(); docs/cpu.md). Otherwise, and for f64, the reference: im2col +
// GEMM (Eigen) per sample and group, col2im for the data gradient; a 1×1 convolution with stride 1
// and no padding multiplies the input directly. Column buffers come from ctx.workspace().
// CUDA: cuDNN, NCHW. For each pass the algorithm is chosen by measurement (cudnnFind*AlgorithmEx
// with a temporary workspace from the pool, freed after the search, so cuDNN allocates nothing and
// ctx.workspace() grows only to what the chosen algorithm needs) the first time a problem is
// seen, and kept in a process-wide, thread-safe cache keyed by (pass, shapes, params, dtype,
// device, allow_tf32, deterministic, workspace limit, alignment of the data). Only algorithms whose workspace fits
// ctx.workspace_limit() are eligible, and with ctx.deterministic() only those cuDNN reports as
// deterministic. f32 convolutions use TF32 tensor cores only when ctx.allow_tf32(). The measurement
// runs the candidate algorithms on the call's own tensors (the filter-gradient search writes a
// scratch buffer, never dw) and synchronises the stream once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "kernels/conv_types.h"
#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// [N, K, P, Q] for input shape x and filter shape w; throws baton::Error naming the problem (a rank
// other than 4, channels that do not match C / groups, groups not dividing C or K, a stride or
// dilation below 1, negative padding, a dilated kernel larger than the padded input).
Shape conv2d_output_shape(const Shape& x, const Shape& w, const Conv2dParams& params);

// y = conv(x, w) (+ bias[k] for every output position when bias is defined; bias is [K]).
void conv2d_forward(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& params,
                    const Tensor& y);
// Whether a convolution of `dtype` on `device` should write channels-last activations (docs/cpu.md): on
// CPU devices in f32, the fast path (oneDNN's NHWC); elsewhere, and for f64, NCHW.
bool conv2d_takes_channels_last(Device device, DType dtype);

// dx = the gradient of <dy, conv(x, w)> with respect to x (written, not accumulated); dx's shape
// is x's, which fixes H and W where a stride leaves them ambiguous.
void conv2d_backward_data(Context& ctx, const Tensor& dy, const Tensor& w, const Conv2dParams& params,
                          const Tensor& dx);
// dw += the gradient with respect to w (accumulated: parameter gradients).
void conv2d_backward_filter(Context& ctx, const Tensor& x, const Tensor& dy, const Conv2dParams& params,
                            const Tensor& dw);
// db[k] += Σ over n, p, q of dy[n, k, p, q] (accumulated; see kernels::bias_grad).
void conv2d_backward_bias(Context& ctx, const Tensor& dy, const Tensor& db);

// The cached algorithm for a pass over these shapes, or nothing when conv2d_* has not yet run it
// with the same settings (ctx's device, allow_tf32, deterministic and workspace limit) on 16-byte
// aligned tensors. x is the input's shape (dx for backward_data), w the filter's.
std::optional<Conv2dAlgorithm> cached_conv2d_algorithm(const Context& ctx, Conv2dPass pass, const Shape& x,
                                                       const Shape& w, const Conv2dParams& params, DType dtype);

struct Conv2dAlgorithmCacheStats {
  int64_t entries = 0;
  int64_t hits = 0;    // lookups that found an algorithm
  int64_t misses = 0;  // lookups that measured
};
Conv2dAlgorithmCacheStats conv2d_algorithm_cache_stats();
// Forgets every cached algorithm and zeroes the statistics (tests, benchmarks).
void clear_conv2d_algorithm_cache();

// The cuDNN call conv2d_* makes for `pass` (the tensors as in that op: x, w, y for forward; dx, w,
// dy for backward_data; x, dw, dy for backward_filter, which accumulates), bare: descriptors built
// and a workspace allocated once, the algorithm fixed to the cached one (run the op once first).
// For benchmarks that measure baton's overhead. Empty on CPU contexts. The tensors must stay alive
// while the returned function is used.
std::function<void()> conv2d_library_call(Context& ctx, Conv2dPass pass, const Tensor& x, const Tensor& w,
                                          const Tensor& y, const Conv2dParams& params);

}  // namespace baton::kernels
