// Reductions: whole-tensor sum, mean, max, sum of squares and L2 norm, and per-channel sums over
// NCHW tensors (bias and batch-norm gradients).
//
// Inputs are f32, f64, f16 or bf16. Results are f64 for f64 inputs and f32 for the others; the
// output tensor must have that dtype. The CPU accumulates in double; CUDA accumulates in float
// (double for f64) in a fixed order, so a CUDA result is the same bits on every run.
#pragma once

#include <cstdint>

#include "kernels/reduce_types.h"
#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// The dtype of a reduction's result for inputs of `input` (f64 -> f64, f32/f16/bf16 -> f32).
DType reduction_dtype(DType input);

// out (shape [], one element) = the reduction of every element of x (any shape).
void reduce(Context& ctx, const Tensor& x, Reduction reduction, const Tensor& out);
void sum(Context& ctx, const Tensor& x, const Tensor& out);
void mean(Context& ctx, const Tensor& x, const Tensor& out);
void max(Context& ctx, const Tensor& x, const Tensor& out);
void sum_squares(Context& ctx, const Tensor& x, const Tensor& out);
void l2_norm(Context& ctx, const Tensor& x, const Tensor& out);

// x is [N, C, H, W]; out [C]: out[c] = Σ over n, h, w of x[n, c, h, w].
void channel_sum(Context& ctx, const Tensor& x, const Tensor& out);
// x and y are [N, C, H, W] (same dtype); out [C]: out[c] = Σ over n, h, w of x[n, c, h, w] · y[n, c, h, w].
void channel_dot(Context& ctx, const Tensor& x, const Tensor& y, const Tensor& out);

}  // namespace baton::kernels
