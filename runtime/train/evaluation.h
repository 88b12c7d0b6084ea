// Evaluation of a model on a test set (mean loss; top-1 and top-5 over the targets — per sample for
// class labels, per position for per-position targets) with the trainer's normalisation,
// shared by every TrainEngine: batches are forwarded in eval mode in one or several pieces.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/data/dataset.h"
#include "runtime/data/loader.h"
#include "runtime/graph/executor.h"
#include "runtime/train/train_engine.h"

namespace baton {

// One evaluated piece of a batch (the batch, or one micro-batch of it): its mean loss and its logits
// with the matching labels on the logits' device, ready on ctx's stream.
struct EvalPiece {
  Context* ctx = nullptr;
  Tensor loss;    // scalar
  Tensor logits;  // [n, classes] or [n, T, classes]; undefined without labels
  Tensor labels;  // the targets, [n] or [n, T], on the logits' device
  int64_t samples = 0;
};

// Whether an evaluation ends early when the process is asked to stop (runtime/core/stop_request.h).
// Where several processes forward each batch together, one of them must not stop alone: never.
enum class EvalStop { on_request, never };

// Mean loss, top-1 and top-5 over `test` in order, normalised as the trainer does, batches loaded
// onto input_ctx's device and evaluated by `forward` (eval mode) in one or several pieces.
// `classification`: the pieces carry logits and labels. With EvalStop::on_request a stop request
// ends it after the batch in progress, with the figures of the batches done (the caller drops them).
EvalResult evaluate_batches(Context& input_ctx, const data::Dataset& test, int64_t batch_size, int workers,
                            bool classification, EvalStop stop,
                            const std::function<std::vector<EvalPiece>(const data::Batch&)>& forward);

// Mean loss, top-1 and top-5 of `executor` (over the whole graph) on `test`, in eval mode, with
// the trainer's normalisation; batches are loaded onto ctx's device.
EvalResult evaluate_model(const Graph& graph, Executor& executor, Context& ctx, const data::Dataset& test,
                          int64_t batch_size, int workers);

}  // namespace baton
