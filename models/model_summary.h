// Sizes and costs of a graph, node by node (parameters, forward multiply-accumulates, activation
// bytes), and its parameter and buffer names with shapes: computed from shapes and Layer::cost
// alone, so nothing is allocated (a VGG's 138M parameters are counted, not created).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/graph/graph.h"

namespace baton::models {

struct NodeSummary {
  std::string name;
  std::string type;
  Shape output_shape;            // of the node's first output
  int64_t params = 0;            // parameter elements
  double macs = 0;               // LayerCost::forward_macs
  int64_t activation_bytes = 0;  // LayerCost::output_bytes: the node's outputs at the graph's batch size
};

struct GraphSummary {
  std::vector<NodeSummary> nodes;  // in topological order
  int64_t params = 0;
  double macs = 0;
  int64_t activation_bytes = 0;
};

// Costs are taken in the element type of each node's first input.
// Parameter and activation totals beyond 2^63 are refused (baton::Error naming the node).
GraphSummary summarize(const Graph& graph);
// {"params": total, "macs": total, "nodes": [{"name", "type", "output_shape", "params", "macs",
// "activation_bytes"}, ...]}, MACs rounded to integers (as a floating-point number beyond 2^63).
nlohmann::json summary_json(const GraphSummary& summary);
// MACs rounded to an integer; nothing when the count does not fit in 64 bits.
std::optional<int64_t> whole_macs(double macs);

struct NamedShape {
  std::string name;
  Shape shape;
};

// "<node>.<spec name>" (ParamStore's names, torchvision's state_dict keys) in topological order of
// the nodes and each layer's spec order.
std::vector<NamedShape> parameter_shapes(const Graph& graph);
std::vector<NamedShape> buffer_shapes(const Graph& graph);

}  // namespace baton::models
