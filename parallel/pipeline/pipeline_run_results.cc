// PipelineRun's results: a training run's mean loss (over every replica of the loss stage) and an
// evaluation's outputs.
#include "parallel/pipeline/pipeline_run.h"

namespace baton::parallel {

PendingLoss PipelineRun::mean_loss(std::vector<std::unique_ptr<LossReadback>>& readbacks) {
  const std::vector<int>& units = routing_.loss_units();
  while (readbacks.size() < units.size()) readbacks.push_back(std::make_unique<LossReadback>());
  std::vector<PendingLoss> parts;
  for (size_t k = 0; k < units.size(); ++k) {
    // Each unit of the loss stage holds the losses of the micro-batches it took (all of them
    // without replicas), weighted by n_m / N: their sum is the batch's mean loss. Across processes
    // this process sums its own units' (the caller adds the other processes').
    const int s = units[k];
    if (!routing_.local(s)) continue;
    std::vector<Tensor> losses;
    std::vector<double> weights;
    for (int m = 0; m < batches_.count(); ++m) {
      const Tensor& loss = state(s).losses[static_cast<size_t>(m)];
      if (!loss.defined()) continue;
      losses.push_back(loss);
      weights.push_back(batches_.loss_scale(m));
    }
    parts.push_back(readbacks[k]->read(stage(s).context(), losses, weights, [s](int64_t tag) {
      return "in pipeline stage " + std::to_string(s) + ", micro-batch " + std::to_string(tag) +
             " (found when the step's loss was read)";
    }));
  }
  if (parts.empty()) return PendingLoss();
  PendingLoss loss = std::move(parts.front());
  parts.erase(parts.begin());
  if (!parts.empty()) loss.sum_with(std::move(parts));
  return loss;
}

PipelineOutputs PipelineRun::take_outputs() {
  PipelineOutputs out;
  out.outputs = std::move(results_);
  out.output_stage = routing_.output_stage();
  out.micro_batch_sizes = batches_.sizes;
  return out;
}

}  // namespace baton::parallel
