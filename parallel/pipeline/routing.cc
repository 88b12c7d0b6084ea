// Building the PipelineRouting from the stages' boundary values (see routing.h).
#include "parallel/pipeline/routing.h"

#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/graph/node_range.h"
#include "runtime/train/graph_contract.h"

namespace baton::parallel {
namespace {

size_t index_of(const std::vector<ValueId>& values, ValueId v) {
  return static_cast<size_t>(std::find(values.begin(), values.end(), v) - values.begin());
}

// The stage whose executor outputs `v` (the one that computes it), and its index there.
std::pair<int, size_t> producer_of(const Graph& graph, const std::vector<StageEnds>& stages, ValueId v) {
  for (size_t s = 0; s < stages.size(); ++s) {
    const std::vector<ValueId>& out = stages[s].outputs;
    const size_t at = index_of(out, v);
    if (at < out.size()) return {static_cast<int>(s), at};
  }
  BATON_FAIL("value '", graph.value(v).name, "' is not an output of any pipeline stage");
}

}  // namespace

PipelineRouting::PipelineRouting(const Graph& graph, std::vector<StageEnds> stages,
                                 std::vector<std::vector<int>> consumers)
    : consumers_(std::move(consumers)) {
  const auto num = stages.size();
  BATON_CHECK(consumers_.size() == num, "pipeline routing: ", consumers_.size(), " consumer lists for ", num,
              " stages");
  sources_.resize(num);
  links_.assign(num, std::vector<std::vector<LinkValue>>(num));
  for (size_t s = 0; s < num; ++s) {
    local_.push_back(stages[s].device.has_value());
    const std::vector<ValueId>& in = stages[s].inputs;
    for (size_t k = 0; k < in.size(); ++k) {
      StageInput source;
      if (graph.value(in[k]).producer < 0) {
        source.graph_input = static_cast<int>(index_of(graph.inputs(), in[k]));
      } else {
        const auto [producer, output] = producer_of(graph, stages, in[k]);
        source.producer_stage = producer;
        links_[static_cast<size_t>(producer)][s].push_back({output, k});
      }
      sources_[s].push_back(source);
    }
  }

  streams_.assign(num, std::vector<LinkStreams>(num));
  for (size_t i = 0; i < num; ++i) {
    for (size_t j = 0; j < num; ++j) {
      const auto& expected = consumers_[i];
      const bool planned = std::find(expected.begin(), expected.end(), static_cast<int>(j)) != expected.end();
      BATON_CHECK(linked(static_cast<int>(i), static_cast<int>(j)) == planned, "stage ", i, " and stage ", j,
                  ": the plan's consumers and the executors' boundary values disagree");
      if (!planned || !local_[i] || !local_[j]) continue;
      const Device a = *stages[i].device, b = *stages[j].device;
      streams_[i][j] = LinkStreams::create(a, b);  // activations
      streams_[j][i] = LinkStreams::create(b, a);  // gradients
    }
  }

  const ValueInfo& loss = graph.value(baton::loss_output(graph));
  BATON_CHECK(loss.producer >= 0 && loss.shape.numel() == 1 && is_floating(loss.dtype), "the graph's first output '",
              loss.name, "' is not a scalar loss");
  graph_outputs_.resize(num);
  for (size_t g = 0; g < graph.outputs().size(); ++g) {
    const ValueId v = graph.outputs()[g];
    BATON_CHECK(graph.value(v).producer >= 0, "graph output '", graph.value(v).name,
                "' is a graph input, not computed by a stage");
    const auto [stage, output] = producer_of(graph, stages, v);
    graph_outputs_[static_cast<size_t>(stage)].push_back({g, output});
    output_stage_.push_back(stage);
    if (g == 0) {
      loss_stage_ = stage;
      loss_output_ = output;
    }
  }
}

// Every stage's boundary values, and its device where this process runs it.
std::vector<StageEnds> stage_ends(const Graph& graph, const Plan& plan,
                                  const std::vector<std::unique_ptr<PipelineStage>>& stages) {
  const std::vector<NodeId> order = graph.topological_order();
  std::vector<StageEnds> ends;
  for (size_t s = 0; s < stages.size(); ++s) {
    if (stages[s]) {
      const Executor& executor = stages[s]->executor();
      ends.push_back({executor.input_values(), executor.output_values(), stages[s]->device()});
      continue;
    }
    std::vector<NodeId> nodes;
    for (int i : plan.stages[s].nodes) nodes.push_back(order.at(static_cast<size_t>(i)));
    NodeRange range = node_range(graph, std::move(nodes));
    ends.push_back({std::move(range.inputs), std::move(range.outputs), std::nullopt});
  }
  return ends;
}

const std::vector<LinkValue>& PipelineRouting::link(int from, int to) const {
  return links_.at(static_cast<size_t>(from)).at(static_cast<size_t>(to));
}

const LinkStreams& PipelineRouting::streams(int from, int to) const {
  return streams_.at(static_cast<size_t>(from)).at(static_cast<size_t>(to));
}

int PipelineRouting::consumer_count(int stage) const {
  int n = 0;
  for (int j = 0; j < num_stages(); ++j) n += linked(stage, j) ? 1 : 0;
  return n;
}

int PipelineRouting::producer_count(int stage) const {
  int n = 0;
  for (int j = 0; j < num_stages(); ++j) n += linked(j, stage) ? 1 : 0;
  return n;
}

}  // namespace baton::parallel
