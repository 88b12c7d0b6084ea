// Evaluating a model on a test set: the loader with the trainer's normalisation, the loss summed
// over samples and the top-1 / top-5 counts of the logits (per position for per-position targets);
// deferred label-check failures raised at each piece's read-back.
#include "runtime/train/evaluation.h"

#include <algorithm>
#include <optional>
#include <string>

#include "kernels/deferred_checks.h"
#include "kernels/loss.h"
#include "runtime/core/stop_request.h"
#include "runtime/train/graph_contract.h"

namespace baton {
namespace {

// The logits as [targets, classes] rows, one per target: [n, C] with labels [n] as they are,
// [n, T, C] with per-position labels [n, T] as [n T, C].
Tensor logits_per_target(const Tensor& logits, const Tensor& labels) {
  const int64_t targets = labels.numel();
  BATON_CHECK(logits.rank() == labels.rank() + 1 && targets > 0 && logits.numel() % targets == 0,
              "evaluation: the prediction ", logits.shape().str(), " does not score the targets ", labels.shape().str(),
              " (expected the targets' shape and one more dimension, the classes)");
  return logits.rank() == 2 ? logits : logits.reshape(Shape{targets, logits.numel() / targets});
}

}  // namespace

EvalResult evaluate_batches(Context& input_ctx, const data::Dataset& test, int64_t batch_size, int workers,
                            bool classification, EvalStop stop,
                            const std::function<std::vector<EvalPiece>(const data::Batch&)>& forward) {
  data::LoaderOptions options;
  options.batch_size = batch_size;
  options.shuffle = false;
  options.drop_last = false;
  options.workers = workers;
  if (test.has_images()) options.normalization = test.normalization();
  data::DataLoader loader(test, options, input_ctx.device());
  EvalResult r;
  double loss_sum = 0;
  int64_t top1 = 0, top5 = 0, scored = 0;
  while (stop == EvalStop::never || !stop_requested()) {
    const std::optional<data::Batch> batch = loader.next(input_ctx.stream());
    if (!batch) break;
    for (const EvalPiece& piece : forward(*batch)) {
      Context& ctx = *piece.ctx;
      const double n = static_cast<double>(piece.samples);
      loss_sum += piece.loss.to(Device::cpu(), ctx.stream()).to_vector<float>(ctx.stream())[0] * n;
      if (classification) {
        const Tensor logits = logits_per_target(piece.logits, piece.labels);
        const Tensor labels = piece.labels.reshape(Shape{piece.labels.numel()});
        Tensor count = Tensor::empty(Shape{}, DType::i64, ctx);
        kernels::topk_correct(ctx, logits, labels, 1, count);
        top1 += count.to_vector<int64_t>(ctx.stream())[0];
        const int k5 = std::min<int>(5, static_cast<int>(logits.size(1)));
        kernels::topk_correct(ctx, logits, labels, k5, count);
        top5 += count.to_vector<int64_t>(ctx.stream())[0];
        scored += labels.numel();
      }
      // The reads above waited for the piece: its bad labels, if any, are reported now.
      kernels::raise_deferred_errors(ctx);
      r.samples += piece.samples;
    }
  }
  if (r.samples > 0) {
    r.loss = loss_sum / static_cast<double>(r.samples);
    if (classification) {
      r.scored = scored;
      r.top1 = static_cast<double>(top1) / static_cast<double>(scored);
      r.top5 = static_cast<double>(top5) / static_cast<double>(scored);
    }
  }
  return r;
}

EvalResult evaluate_model(const Graph& g, Executor& ex, Context& ctx, const data::Dataset& test, int64_t batch_size,
                          int workers) {
  const size_t loss_at = executor_output_index(ex, loss_output(g));
  const size_t prediction_at = executor_output_index(ex, prediction_output(g));
  const bool classification = has_labels(g);
  return evaluate_batches(
      ctx, test, batch_size, workers, classification, EvalStop::on_request, [&](const data::Batch& batch) {
        Tape tape;
        const std::vector<Tensor> out = ex.forward(ctx, batch_inputs(g, ex, batch), tape, Mode::eval);
        return std::vector<EvalPiece>{{.ctx = &ctx,
                                       .loss = out[loss_at],
                                       .logits = classification ? out[prediction_at] : Tensor(),
                                       .labels = batch.targets,
                                       .samples = batch.rows()}};
      });
}

}  // namespace baton
