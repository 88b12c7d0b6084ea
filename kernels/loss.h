// Loss ops: softmax cross-entropy (mean over rows, optional label smoothing) forward and backward,
// and top-k correct counts.
//
// Shapes: logits and probs are [N, C] (N >= 1 rows, C >= 1 classes), labels [N] of dtype i32 or
// i64 with every value in [0, C). Logits and probs are f32, f64, f16 or bf16; arithmetic happens in
// float (double for f64); the CPU reference accumulates its sums in double.
//
// Labels outside [0, C) are a baton::Error naming the op, 'labels', the count, the first bad row and
// its value ("softmax_cross_entropy_forward: argument 'labels' has 2 value(s) outside [0, 10), the
// first is 10 at row 617").
//   CPU:  checked on the host before any work; this call throws.
//   CUDA: checked by a small kernel on the context's stream before the op's kernels, without a host
//         synchronisation (so the host can run ahead of the GPU past a loss op): the first failure
//         is recorded in the context's device-check buffer and thrown, once, at the next natural
//         synchronisation: kernels::raise_deferred_errors(ctx) (kernels/deferred_checks.h), a
//         training step's loss (runtime/train/pending_loss.h), an evaluation or a checkpoint. The
//         op's outputs are written meanwhile. With ctx.set_sync_checks(true) or BATON_SYNC_CHECKS=1
//         the check synchronises the stream and this call throws before any output is written, as on
//         the CPU. The op kernels never index memory with a bad label: such a row gets a NaN loss,
//         no target term in its gradient, and never counts as correct.
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
