// CUDA launchers of kernels/batch_norm_statistics.h (kernels/cuda/batch_norm_statistics_cuda.cu).
// Plain C++: the Context first (work on its device and stream), device pointers to elements of
// `dtype` (f32 or f64), per-channel arrays of `channels` elements. Arguments are checked by
// kernels/batch_norm_statistics.cc.
#pragma once

#include <cstdint>

#include "kernels/cuda/batch_norm_cuda.h"
#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// Per-channel mean and biased variance of x (NCHW `dims`): two passes split over the batch, partials
// in ctx.workspace().
void batch_norm_statistics(Context& ctx, DType dtype, const BatchNormDims& dims, const void* x, void* mean, void* var);

// Chan et al.'s merge of (batch_mean, batch_var) over batch_count values into (mean, var) over count.
void batch_norm_merge_statistics(Context& ctx, DType dtype, int64_t channels, int64_t count, void* mean, void* var,
                                 int64_t batch_count, const void* batch_mean, const void* batch_var);

// running = (1 − momentum)·running + momentum·statistic, the variance made unbiased with count.
void batch_norm_commit_statistics(Context& ctx, DType dtype, int64_t channels, int64_t count, const void* mean,
                                  const void* var, double momentum, void* running_mean, void* running_var);

}  // namespace baton::kernels::cuda
