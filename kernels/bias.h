// Per-channel bias along dimension 1: adding it (Conv2d on [N, C, H, W], Linear on [N, C]) and
// accumulating its gradient.
//
// Tensors are f32, f64, f16 or bf16 (bias and output of one dtype); arithmetic in float (double for
// f64). `out` / `dy` have rank >= 2 and are read as [N, C, inner] with inner the product of the
// dimensions after 1 (1 for a rank-2 tensor).
#pragma once

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// out[n, c, i] += bias[c]; bias is [C].
void bias_add(Context& ctx, const Tensor& bias, const Tensor& out);

// db[c] += Σ over n and i of dy[n, c, i]; db is [C]. The sum is kernels::channel_sum (double on the
// CPU, a fixed-order float / double reduction on CUDA: the same bits on every run), rounded to db's
// dtype and then added to db.
void bias_grad(Context& ctx, const Tensor& dy, const Tensor& db);

}  // namespace baton::kernels
