// Loss ops: softmax cross-entropy (mean over rows, optional label smoothing) forward and backward,
// and top-k correct counts.
//
// Shapes: logits and probs are [N, C] (N >= 1 rows, C >= 1 classes), labels [N] of dtype i32 or
// i64 with every value in [0, C). Logits and probs are f32, f64, f16 or bf16; arithmetic happens in
// float (double for f64); the CPU reference accumulates its sums in double.
//
// Labels outside [0, C) are a baton::Error naming 'labels', the first bad row and its value.
//   CPU:  checked on the host before any work.
//   CUDA: checked by a small kernel on the context's stream before the op's kernels; the launcher
//         copies its result (count, first bad row and value) to the host and synchronises the
//         stream to read it, so the error is thrown by this call, before any output is written,
//         exactly as on the CPU. The price is one stream synchronisation per call (the host
//         cannot run ahead of the GPU past a loss op). The op kernels never index memory with a
//         bad label even if labels change behind the check's back (another stream writing them):
//         such a row gets a NaN loss, no target term in its gradient, and never counts as correct.
#pragma once

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// loss_out = mean over rows n of -sum_c q_nc * log(softmax(logits_n)_c), with the smoothed target
// q_nc = (1 - label_smoothing) * [c == labels_n] + label_smoothing / C, computed stably
// (log-sum-exp after subtracting the row maximum). probs_out receives softmax(logits) for the
// backward pass. label_smoothing in [0, 1]. loss_out is a scalar (shape []) of dtype f32, or f64
// for f64 logits; probs_out has the logits' shape and dtype.
void softmax_cross_entropy_forward(Context& ctx, const Tensor& logits, const Tensor& labels, double label_smoothing,
                                   const Tensor& loss_out, const Tensor& probs_out);

// dlogits = grad_scale * (probs - q) / N, with q the smoothed target above: the gradient of
// grad_scale * loss_out with respect to the logits. dlogits has the shape and dtype of probs.
void softmax_cross_entropy_backward(Context& ctx, const Tensor& probs, const Tensor& labels, double label_smoothing,
                                    double grad_scale, const Tensor& dlogits);

// count_out (shape [], i64) = the number of rows whose label is among the k largest logits, for
// 1 <= k <= C. Ties count in the label's favour: a row is correct when fewer than k logits are
// strictly greater than the label's logit (so with k = 1 a row whose maximum is shared by the
// label and another class is correct). A NaN label logit is never correct; NaN logits of other
// classes are never greater.
void topk_correct(Context& ctx, const Tensor& logits, const Tensor& labels, int k, const Tensor& count_out);

}  // namespace baton::kernels
