// Elementwise ops: arithmetic, ReLU, fill, copy and dtype casts over whole tensors.
//
// Every tensor of a call has the same shape. Unless an op says otherwise the tensors also share one
// floating dtype (f32, f64, f16, bf16) and the arithmetic happens in float (double for f64), with
// one rounding to the output dtype at the end. An output may be the very tensor of an input (in
// place: `add(ctx, a, b, a)`); an output that overlaps an input only in part is an error.
#pragma once

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// out = a + b, out = a - b, out = a * b.
void add(Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out);
// a + b in a new tensor in a's memory format (b converted first when its format differs): how
// gradients of one value arriving in different formats are summed.
Tensor sum_in_format_of(Context& ctx, const Tensor& a, const Tensor& b);
void sub(Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out);
void mul(Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out);

// Scalars (alpha, beta) are rounded to float first for f32, f16 and bf16 tensors.
// out = alpha * x.
void scale(Context& ctx, const Tensor& x, double alpha, const Tensor& out);
// y = alpha * x + y (BLAS order: y is both input and output).
void axpy(Context& ctx, double alpha, const Tensor& x, const Tensor& y);
// out = alpha * x + beta * y.
void axpby(Context& ctx, double alpha, const Tensor& x, double beta, const Tensor& y, const Tensor& out);

// out = max(x, 0); NaN stays NaN (a diverging run shows it) and -0 becomes +0.
void relu_forward(Context& ctx, const Tensor& x, const Tensor& out);
// dx = dy where y > 0, else 0. `y` is the output of relu_forward (not its input): y > 0 exactly where
// x > 0, and keeping y lets the forward pass run in place.
void relu_backward(Context& ctx, const Tensor& y, const Tensor& dy, const Tensor& dx);

// Every element of `out` = value converted to its dtype (any dtype; integer dtypes need a value
// they hold exactly).
void fill(Context& ctx, const Tensor& out, double value);
// out = src: same shape and dtype (any dtype), both on the context's device; ordered on its stream.
void copy(Context& ctx, const Tensor& src, const Tensor& out);
// out = src converted to out's dtype; any pair of f32, f64, f16 and bf16 (equal dtypes copy).
// Narrowing rounds to nearest even, with one rounding even for f64 -> f16 / bf16 (no double
// rounding through f32): the CPU and CUDA results are the same bits for every value but NaN,
// which stays a NaN (its payload may differ).
void cast(Context& ctx, const Tensor& src, const Tensor& out);

}  // namespace baton::kernels
