// Splitting a batch into micro-batch views (see micro_batches.h).
#include "parallel/pipeline/micro_batches.h"

#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/data/batch.h"

namespace baton::parallel {
namespace {

int64_t batch_size_of(const std::vector<Tensor>& inputs) {
  if (inputs.empty() || !inputs[0].defined() || inputs[0].rank() == 0) return 0;
  return inputs[0].size(0);
}

}  // namespace

double MicroBatches::loss_scale(int micro_batch) const {
  return static_cast<double>(sizes.at(static_cast<size_t>(micro_batch))) / static_cast<double>(batch);
}

MicroBatches split_batch(const Graph& graph, const std::vector<Tensor>& inputs, int micro_batches,
                         std::string_view what) {
  const std::vector<ValueId>& graph_inputs = graph.inputs();
  BATON_CHECK(inputs.size() == graph_inputs.size(), "pipeline ", what, ": ", inputs.size(),
              " inputs given, the graph has ", graph_inputs.size());
  const int64_t n = batch_size_of(inputs);
  for (size_t g = 0; g < inputs.size(); ++g) {
    const std::string& name = graph.value(graph_inputs[g]).name;
    BATON_CHECK(inputs[g].defined() && inputs[g].rank() > 0 && inputs[g].size(0) == n, "pipeline ", what, ": input '",
                name, "' must be a defined tensor with the batch (", n, ") in dimension 0");
  }
  BATON_CHECK(n >= micro_batches, "pipeline ", what, ": a batch of ", n, " cannot be split into ", micro_batches,
              " micro-batches");
  MicroBatches out;
  out.batch = n;
  out.inputs = data::split_rows(inputs, micro_batches, "pipeline micro-batches");
  for (const std::vector<Tensor>& part : out.inputs) out.sizes.push_back(part.at(0).size(0));
  return out;
}

int micro_batches_for(const std::vector<Tensor>& inputs, int at_most) {
  return static_cast<int>(std::min<int64_t>(at_most, std::max<int64_t>(batch_size_of(inputs), 1)));
}

}  // namespace baton::parallel
