// A node set's topological order and boundary values.
#include "runtime/graph/node_range.h"

#include <algorithm>
#include <unordered_set>

#include "runtime/core/error.h"

namespace baton {

NodeRange node_range(const Graph& graph, std::vector<NodeId> nodes) {
  BATON_CHECK(!nodes.empty(), "an executor needs at least one node");
  std::vector<int> position(static_cast<size_t>(graph.num_nodes()), -1);
  const std::vector<NodeId> order = graph.topological_order();
  for (size_t i = 0; i < order.size(); ++i) position[static_cast<size_t>(order[i])] = static_cast<int>(i);
  std::sort(nodes.begin(), nodes.end(),
            [&](NodeId a, NodeId b) { return position[static_cast<size_t>(a)] < position[static_cast<size_t>(b)]; });
  BATON_CHECK(std::adjacent_find(nodes.begin(), nodes.end()) == nodes.end(), "executor: a node is listed twice");

  NodeRange range;
  const std::unordered_set<NodeId> in_range(nodes.begin(), nodes.end());
  std::unordered_set<ValueId> seen_inputs;
  for (NodeId n : nodes) {
    for (ValueId v : graph.node(n).inputs) {
      if (!in_range.contains(graph.value(v).producer) && seen_inputs.insert(v).second) range.inputs.push_back(v);
    }
  }
  const std::vector<ValueId>& graph_outputs = graph.outputs();
  for (NodeId n : nodes) {
    for (ValueId v : graph.node(n).outputs) {
      const ValueInfo& info = graph.value(v);
      const bool read_outside =
          std::any_of(info.consumers.begin(), info.consumers.end(), [&](NodeId c) { return !in_range.contains(c); });
      const bool is_graph_output = std::find(graph_outputs.begin(), graph_outputs.end(), v) != graph_outputs.end();
      if (read_outside || is_graph_output) range.outputs.push_back(v);
    }
  }
  range.nodes = std::move(nodes);
  return range;
}

}  // namespace baton
