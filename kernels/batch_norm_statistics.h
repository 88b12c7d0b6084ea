// Batch-norm statistics for deferred running-statistics updates (the pipeline's deferred batch
// norm): the per-channel mean and biased variance of a batch, their merge across micro-batches, and
// the running-statistics update from the merged ones, exactly as batch_norm_forward_train would
// make it from one forward over the whole mini-batch.
//
// x is [N, C, H, W], every other floating tensor [C] of x's dtype (f32 or f64), all on the
// context's device. The CPU computes in double (rounded once to the dtype), as
// batch_norm_forward_train does; CUDA in the dtype's accumulator type (float for f32), one block
// per channel in a fixed reduction order.
#pragma once

#include <cstdint>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// mean[c] and var[c] (biased: over the N·H·W values of channel c; two passes, mean then squared
// deviations) of x. On the CPU the same arithmetic as batch_norm_forward_train's statistics.
void batch_norm_statistics(Context& ctx, const Tensor& x, const Tensor& mean, const Tensor& var);

// Merges the statistics of a batch of `batch_count` values per channel (batch_mean, biased
// batch_var) into those of `count` values seen before (mean, var, updated in place) — Chan et al.'s
// pairwise update: with n = count + batch_count and δ = batch_mean − mean,
//   mean += δ·batch_count/n,   var = (count·var + batch_count·batch_var + δ²·count·batch_count/n)/n.
// count = 0 copies the batch's. This is the combination of per-channel sums and sums of squares
// (Σx = n·mean, Σx² = n·(var + mean²)) without the cancellation of Σx²/n − mean².
// count >= 0, batch_count >= 1.
void batch_norm_merge_statistics(Context& ctx, int64_t count, const Tensor& mean, const Tensor& var,
                                 int64_t batch_count, const Tensor& batch_mean, const Tensor& batch_var);

// The running-statistics update batch_norm_forward_train makes, from the statistics (mean, biased
// var) of `count` values (>= 2):
//   running_mean = (1 − momentum)·running_mean + momentum·mean
//   running_var  = (1 − momentum)·running_var + momentum·var·count/(count − 1)   (unbiased)
// then num_batches_tracked (an i64 scalar, or undefined) += 1. momentum in [0, 1].
void batch_norm_commit_statistics(Context& ctx, int64_t count, const Tensor& mean, const Tensor& var, double momentum,
                                  const Tensor& running_mean, const Tensor& running_var,
                                  const Tensor& num_batches_tracked);

}  // namespace baton::kernels
