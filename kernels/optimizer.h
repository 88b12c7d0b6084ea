// Optimizer ops: fused single-pass parameter updates over flat buffers.
//
// params, grads and the optimizer state all have the same shape (any rank; treated as one flat
// buffer) and the same dtype, f32 or f64 (16-bit parameters are not supported: keep f32 master
// weights). Arithmetic happens in the dtype (float for f32, double for f64); the scalar
// hyper-parameters are combined in double on the host first (e.g. 1 - lr * weight_decay, the bias
// corrections) and then converted. The CPU reference and the CUDA kernels evaluate the same
// per-element formulas (kernels/optimizer_math.h); CUDA may fuse a multiply and an add into one
// FMA, so the devices can differ in the last bits. CUDA: one grid-stride pass, 16-byte vectors
// when every buffer is 16-byte aligned, scalar accesses otherwise.
//
// Bad input (shape or dtype mismatch, a missing momentum buffer when momentum > 0, step < 1,
// lr < 0, betas outside [0, 1), negative eps, weight_decay or momentum, dampening outside [0, 1],
// nesterov without momentum or with dampening) is a baton::Error naming the argument.
#pragma once

#include <cstdint>

#include "kernels/optimizer_types.h"
#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// Updates params (and momentum_buf when momentum > 0) in place. momentum_buf may be an undefined
// Tensor when momentum == 0 (it is not touched then).
void sgd_step(Context& ctx, const Tensor& params, const Tensor& grads, const Tensor& momentum_buf, const SgdParams& p);

void adamw_step(Context& ctx, const Tensor& params, const Tensor& grads, const Tensor& exp_avg,
                const Tensor& exp_avg_sq, const AdamWParams& p);

}  // namespace baton::kernels
