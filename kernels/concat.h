// Channel concatenation: joining NC... tensors along dimension 1 (Concat, the Inception / DenseNet
// join) and the inverse split for backward. Tensors have rank >= 2, one dtype (any: elements are
// moved as bytes) and equal sizes in every dimension but 1. Each part is one strided copy of N rows
// (one kernel per part on CUDA). The output must not share memory with an input.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// inputs [N, C_i, d2, ...] (at least one) -> out [N, C_0 + C_1 + ..., d2, ...]: input i fills the
// channels of out starting at C_0 + ... + C_(i-1).
void concat_channels(Context& ctx, std::span<const Tensor> inputs, const Tensor& out);

// The inverse: x [N, C_0 + C_1 + ..., d2, ...] -> outputs [N, C_i, d2, ...] (the channel counts C_i
// are the outputs' dimension 1 and must add up to x's).
void split_channels(Context& ctx, const Tensor& x, std::span<const Tensor> outputs);

// One part of a split: out [N, C, d2, ...] = channels [begin, begin + C) of x [N, C_x, d2, ...].
void slice_channels(Context& ctx, const Tensor& x, int64_t begin, const Tensor& out);

}  // namespace baton::kernels
