// TrainEngine: what the Trainer's loop runs each step on — the whole model on one device (the
// default, in trainer.cc) or a pipeline of stages (parallel/pipeline/pipeline_trainer.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/data/dataset.h"
#include "runtime/data/loader.h"
#include "runtime/graph/executor.h"
#include "runtime/train/checkpoint.h"

namespace baton {

struct EvalResult {
  double loss = 0;
  double top1 = -1;  // -1 when the task has no labels
  double top5 = -1;
  int64_t samples = 0;
};

class TrainEngine {
 public:
  virtual ~TrainEngine() = default;
  // Training batches are loaded onto this context's device, ordered on its stream.
  virtual Context& input_context() = 0;
  // Initial parameters, exactly as ParamStore::initialize(seed) on the whole model gives them.
  virtual void initialize(uint64_t seed) = 0;
  // Zeroes the gradients, runs forward and backward over `batch` (the random layers keyed by
  // `seed`), applies the optimiser with `lr` and returns the batch's mean loss.
  virtual double step(const data::Batch& batch, uint64_t seed, double lr) = 0;
  virtual EvalResult evaluate(const data::Dataset& test, int64_t batch_size, int workers) = 0;
  // Checkpoints in the single-device format (every parameter and buffer of the whole model by name).
  virtual std::string save_checkpoint(CheckpointManager& manager, const CheckpointState& state) = 0;
  virtual CheckpointState load_checkpoint(const std::string& dir) = 0;
};

// One evaluated piece of a batch (the batch, or one micro-batch of it): its mean loss and its logits
// with the matching labels on the logits' device, ready on ctx's stream.
struct EvalPiece {
  Context* ctx = nullptr;
  Tensor loss;    // scalar
  Tensor logits;  // [n, classes]; undefined without labels
  Tensor labels;  // [n] on the logits' device
  int64_t samples = 0;
};

// Mean loss, top-1 and top-5 over `test` in order, normalised as the trainer does, batches loaded
// onto input_ctx's device and evaluated by `forward` (eval mode) in one or several pieces.
// `classification`: the pieces carry logits and labels.
EvalResult evaluate_batches(Context& input_ctx, const data::Dataset& test, int64_t batch_size, int workers,
                            bool classification,
                            const std::function<std::vector<EvalPiece>(const data::Batch&)>& forward);

// Mean loss, top-1 and top-5 of `executor` (over the whole graph) on `test`, in eval mode, with
// the trainer's normalisation; batches are loaded onto ctx's device.
EvalResult evaluate_model(const Graph& graph, Executor& executor, Context& ctx, const data::Dataset& test,
                          int64_t batch_size, int workers);

// The per-channel normalisation the trainer applies to a dataset (CIFAR's statistics, else 0.5 / 0.5).
data::Normalization normalization_for(const data::Dataset& dataset);

}  // namespace baton
