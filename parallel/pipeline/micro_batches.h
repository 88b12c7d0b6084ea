// MicroBatches: one step's or evaluation's batch split into micro-batches — zero-copy views of each
// graph input along dimension 0 — with each micro-batch's share of the batch and its random seed.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "parallel/replicas/micro_batch_seed.h"
#include "runtime/core/tensor.h"
#include "runtime/graph/graph.h"

namespace baton::parallel {

struct MicroBatches {
  std::vector<std::vector<Tensor>> inputs;  // [micro-batch][graph input]
  std::vector<int64_t> sizes;               // samples in each micro-batch
  int64_t batch = 0;                        // samples in all

  int count() const { return static_cast<int>(sizes.size()); }
  // n_m / N: micro-batch m's loss gradient, so that the micro-batch gradients sum to the batch's.
  double loss_scale(int micro_batch) const;
};

// Splits `inputs` (one tensor per graph.inputs() entry, the batch in dimension 0) into
// `micro_batches` views (data::split_rows); errors name `what` ("step", "evaluate") and the offending input.
MicroBatches split_batch(const Graph& graph, const std::vector<Tensor>& inputs, int micro_batches,
                         std::string_view what);

// min(at_most, batch), at least 1: evaluation splits a batch smaller than M into single samples.
int micro_batches_for(const std::vector<Tensor>& inputs, int at_most);

}  // namespace baton::parallel
