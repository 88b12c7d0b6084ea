// Dropout ops: the keep mask is regenerated from Philox in both passes, so nothing is stored
// between forward and backward but the seed.
//
// Element i of the tensor (row-major index) draws the 32 bits philox::uint32_at(seed, i), i.e.
// stream index i of the stream keyed by `seed` (runtime/core/philox.h), and is kept iff the uniform
// u = philox::to_uniform_float(bits) (24 random bits) satisfies u >= p. Kept elements are scaled by
// 1 / (1 - p) (formed in double, rounded once to float, or double for f64 tensors); dropped elements
// are +0, even where x is NaN or infinite. The mask depends only on (seed, i, p): CPU and CUDA write
// identical bits, whatever the launch shape. p = 0 keeps every element (out = x, a plain copy).
//
// x / dy and out / dx have one shape and one floating dtype (f32, f64, f16, bf16); the output may be
// the very tensor of the input (in place); p must be in [0, 1).
#pragma once

#include <cstdint>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// out = mask · x / (1 - p).
void dropout_forward(Context& ctx, const Tensor& x, double p, uint64_t seed, const Tensor& out);

// dx = mask · dy / (1 - p), with the mask of dropout_forward for the same p and seed.
void dropout_backward(Context& ctx, const Tensor& dy, double p, uint64_t seed, const Tensor& dx);

}  // namespace baton::kernels
