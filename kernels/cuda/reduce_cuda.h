// CUDA launchers of the reduce family (kernels/cuda/reduce_cuda.cu). Plain C++: the Context
// first (work on its device and stream), pointers to elements of `dtype`. Results
// are written as reduction_dtype(dtype) (f32, or f64 for f64). Each launcher needs scratch memory
// of the size its *_workspace_bytes function gives, valid on ctx's stream (Context::workspace).
// Arguments are checked by the caller (kernels/reduce.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/reduce_types.h"
#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

size_t reduce_workspace_bytes(DType dtype, int64_t n);
// *out = the reduction of x[0, n). Deterministic: block partials, then one block combines them.
// mean and max need n > 0.
void reduce(Context& ctx, Reduction reduction, DType dtype, const void* x, int64_t n, void* out, void* workspace);

size_t channel_workspace_bytes(DType dtype, int64_t batch, int64_t channels, int64_t hw);
// x (and y) are [batch, channels, hw]; out[c] = Σ over b, i of x[b, c, i] · y[b, c, i], or of
// x[b, c, i] alone when y is null. Deterministic: partial column sums over slices of the batch,
// then one block per channel.
void channel_reduce(Context& ctx, DType dtype, const void* x, const void* y, int64_t batch, int64_t channels,
                    int64_t hw, void* out, void* workspace);

}  // namespace baton::kernels::cuda
