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

  for (size_t i = 0; i < num; ++i) {
    int consumers_of_i = 0, producers_of_i = 0;
    for (size_t j = 0; j < num; ++j) {
      consumers_of_i += linked(static_cast<int>(i), static_cast<int>(j)) ? 1 : 0;
      producers_of_i += linked(static_cast<int>(j), static_cast<int>(i)) ? 1 : 0;
    }
    consumer_counts_.push_back(consumers_of_i);
    producer_counts_.push_back(producers_of_i);
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
      loss_units_ = {stage};
    }
  }
}

PipelineRouting PipelineRouting::over_units(const std::vector<int>& unit_stage,
                                            const std::vector<std::optional<Device>>& unit_devices) const {
  const size_t units = unit_stage.size();
  BATON_CHECK(unit_devices.size() == units, "pipeline routing: ", unit_devices.size(), " devices for ", units,
              " units");
  std::vector<int> first_unit(static_cast<size_t>(num_stages()), -1);
  for (size_t u = units; u-- > 0;) first_unit.at(static_cast<size_t>(unit_stage[u])) = static_cast<int>(u);
  PipelineRouting out;
  for (const std::optional<Device>& device : unit_devices) out.local_.push_back(device.has_value());
  out.consumers_.resize(units);
  out.links_.assign(units, std::vector<std::vector<LinkValue>>(units));
  out.streams_.assign(units, std::vector<LinkStreams>(units));
  out.graph_outputs_.resize(units);
  for (size_t u = 0; u < units; ++u) {
    const auto s = static_cast<size_t>(unit_stage[u]);
    out.sources_.push_back(sources_.at(s));  // a producer_stage stays a stage (for messages only)
    out.consumer_counts_.push_back(consumer_counts_[s]);
    out.producer_counts_.push_back(producer_counts_[s]);
    if (static_cast<int>(u) == first_unit[s]) out.graph_outputs_[u] = graph_outputs_[s];
    if (static_cast<int>(s) == loss_stage_) out.loss_units_.push_back(static_cast<int>(u));
    for (size_t v = 0; v < units; ++v) {
      const auto t = static_cast<size_t>(unit_stage[v]);
      out.links_[u][v] = links_[s][t];
      if (out.links_[u][v].empty()) continue;
      out.consumers_[u].push_back(static_cast<int>(v));
      if (!unit_devices[u] || !unit_devices[v]) continue;  // through the processes' communicator
      out.streams_[u][v] = LinkStreams::create(*unit_devices[u], *unit_devices[v]);  // activations
      out.streams_[v][u] = LinkStreams::create(*unit_devices[v], *unit_devices[u]);  // gradients
    }
  }
  for (const int stage : output_stage_) out.output_stage_.push_back(first_unit.at(static_cast<size_t>(stage)));
  out.loss_stage_ = first_unit.at(static_cast<size_t>(loss_stage_));
  out.loss_output_ = loss_output_;
  return out;
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

int PipelineRouting::consumer_count(int stage) const { return consumer_counts_.at(static_cast<size_t>(stage)); }

int PipelineRouting::producer_count(int stage) const { return producer_counts_.at(static_cast<size_t>(stage)); }

bool PipelineRouting::computes_loss(int stage) const {
  return std::find(loss_units_.begin(), loss_units_.end(), stage) != loss_units_.end();
}

}  // namespace baton::parallel
