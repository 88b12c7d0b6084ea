// Graph summaries from shapes and layer costs.
#include "models/model_summary.h"

#include <cmath>

namespace baton::models {
namespace {

std::vector<Shape> input_shapes(const Graph& g, const Node& node) {
  std::vector<Shape> shapes;
  for (ValueId v : node.inputs) shapes.push_back(g.value(v).shape);
  return shapes;
}

int64_t elements(const std::vector<TensorSpec>& specs) {
  int64_t n = 0;
  for (const TensorSpec& s : specs) n += s.shape.numel();
  return n;
}

// Named shapes of every node's parameters (buffers when `buffers`).
std::vector<NamedShape> named_shapes(const Graph& g, bool buffers) {
  std::vector<NamedShape> out;
  for (NodeId n : g.topological_order()) {
    const Node& node = g.node(n);
    const std::vector<Shape> shapes = input_shapes(g, node);
    for (const TensorSpec& s : buffers ? node.layer->buffer_specs(shapes) : node.layer->param_specs(shapes)) {
      out.push_back({node.name + "." + s.name, s.shape});
    }
  }
  return out;
}

}  // namespace

GraphSummary summarize(const Graph& g) {
  GraphSummary summary;
  for (NodeId n : g.topological_order()) {
    const Node& node = g.node(n);
    const std::vector<Shape> shapes = input_shapes(g, node);
    const LayerCost cost = node.layer->cost(shapes, g.value(node.inputs[0]).dtype);
    NodeSummary s{node.name,
                  std::string(node.layer->type()),
                  g.value(node.outputs[0]).shape,
                  elements(node.layer->param_specs(shapes)),
                  cost.forward_macs,
                  cost.output_bytes};
    BATON_CHECK(!__builtin_add_overflow(summary.params, s.params, &summary.params),
                "the graph's parameters up to node '", node.name, "' number more than 2^63");
    BATON_CHECK(!__builtin_add_overflow(summary.activation_bytes, s.activation_bytes, &summary.activation_bytes),
                "the graph's activations up to node '", node.name, "' take more than 2^63 bytes");
    summary.macs += s.macs;
    summary.nodes.push_back(std::move(s));
  }
  return summary;
}

std::optional<int64_t> whole_macs(double macs) {
  if (!(macs >= 0 && macs < 0x1p63)) return std::nullopt;
  return std::llround(macs);
}

nlohmann::json summary_json(const GraphSummary& summary) {
  const auto macs = [](double m) -> nlohmann::json {
    const std::optional<int64_t> whole = whole_macs(m);
    return whole ? nlohmann::json(*whole) : nlohmann::json(m);
  };
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeSummary& s : summary.nodes) {
    nodes.push_back({{"name", s.name},
                     {"type", s.type},
                     {"output_shape", s.output_shape.dims()},
                     {"params", s.params},
                     {"macs", macs(s.macs)},
                     {"activation_bytes", s.activation_bytes}});
  }
  return {{"params", summary.params}, {"macs", macs(summary.macs)}, {"nodes", std::move(nodes)}};
}

std::vector<NamedShape> parameter_shapes(const Graph& g) { return named_shapes(g, false); }
std::vector<NamedShape> buffer_shapes(const Graph& g) { return named_shapes(g, true); }

}  // namespace baton::models
