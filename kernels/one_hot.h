// One-hot encoding: class indices to rows of zeros with a one at the index (no gradient: the
// indices are integers).
#pragma once

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// out[..., c] = (indices[...] == c) for indices of dtype i32 or i64 (any shape) with every value in
// [0, C), and out of shape indices.shape + [C] in f32, f64, f16 or bf16. An index outside [0, C) is
// a baton::Error naming the op, the count, the first bad position and its value: at once on the
// CPU; on CUDA at the next synchronisation of the context's deferred checks (kernels/deferred_checks.h),
// or at once when the context synchronises its checks (a bad index gives a row of zeros meanwhile).
void one_hot(Context& ctx, const Tensor& indices, const Tensor& out);

}  // namespace baton::kernels
