// Distinct layers of a graph: nodes of one type keyed by their config and input shape.
#include "models/distinct_layers.h"

#include <map>

namespace baton::models {

std::vector<DistinctLayer> distinct_layers(const Graph& graph, std::string_view type) {
  std::vector<DistinctLayer> distinct;
  std::map<std::string, size_t> index;  // key: config and input shapes
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.layer->type() != type) continue;
    std::string key = node.layer->config().dump();
    for (ValueId input : node.inputs) {
      key.push_back(' ');
      key.append(graph.value(input).shape.str());
    }
    const auto [it, fresh] = index.emplace(key, distinct.size());
    if (!fresh) {
      ++distinct[it->second].count;
      continue;
    }
    const ValueInfo& input = graph.value(node.inputs.at(0));
    distinct.push_back({node.name, node.layer, input.shape, input.producer < 0, 1});
  }
  return distinct;
}

}  // namespace baton::models
