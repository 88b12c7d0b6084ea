// Activation ops: ReLU6, sigmoid and tanh forward and backward, and scaling by a scalar that lives
// in device memory (the incoming gradient of a loss).
//
// Every tensor of a call has the same shape and one floating dtype (f32, f64, f16, bf16), except
// the scalar of scale_by_scalar. Arithmetic happens in float (double for f64) with one rounding to
// the output dtype. An output may be the very tensor of an input (in place); an output that
// overlaps an input only in part is an error. CPU and CUDA agree exactly for relu6 and
// scale_by_scalar; sigmoid and tanh go through the host's and the device's exp / tanh, which may
// differ in the last bit of the accumulation type.
#pragma once

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// out = min(max(x, 0), 6); NaN stays NaN and -0 becomes +0.
void relu6_forward(Context& ctx, const Tensor& x, const Tensor& out);
// dx = dy where 0 < x < 6, else +0. From the input x (as PyTorch's hardtanh_backward): the output
// cannot tell x = 6 from x > 6.
void relu6_backward(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& dx);

// out = 1 / (1 + exp(-x)), evaluated without overflow for large |x|.
void sigmoid_forward(Context& ctx, const Tensor& x, const Tensor& out);
// dx = dy · y · (1 - y) from the output y of sigmoid_forward.
void sigmoid_backward(Context& ctx, const Tensor& y, const Tensor& dy, const Tensor& dx);

// out = tanh(x).
void tanh_forward(Context& ctx, const Tensor& x, const Tensor& out);
// dx = dy · (1 - y²) from the output y of tanh_forward.
void tanh_backward(Context& ctx, const Tensor& y, const Tensor& dy, const Tensor& dx);

// out = alpha · s · x, where s is the single element of `scalar` (shape [] or [1], dtype f32 or f64,
// on the context's device; it is never read on the host, so no synchronisation happens). x and out
// share shape and dtype (any floating dtype, independent of the scalar's). The factor alpha · s is
// formed in double and rounded once to float (double for f64 tensors); then out = factor · x.
void scale_by_scalar(Context& ctx, const Tensor& x, const Tensor& scalar, double alpha, const Tensor& out);
inline void scale_by_scalar(Context& ctx, const Tensor& x, const Tensor& scalar, const Tensor& out) {
  scale_by_scalar(ctx, x, scalar, 1.0, out);
}

}  // namespace baton::kernels
