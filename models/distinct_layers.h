// The distinct layers of one type in a graph (same config and input shape merged) with how often
// each occurs, in the order of first use: the shapes a layer benchmark times for a whole model.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/graph/graph.h"

namespace baton::models {

struct DistinctLayer {
  std::string name;  // the node where it first occurs ("layer1.0.conv2")
  LayerPtr layer;
  Shape input_shape;                  // of its first input, at the graph's batch size
  bool input_is_graph_input = false;  // then no network needs its input gradient
  int count = 1;                      // occurrences in the graph
};

// Nodes whose layer type is `type` ("Conv2d"), merged when type, config and input shapes are equal.
std::vector<DistinctLayer> distinct_layers(const Graph& graph, std::string_view type);

}  // namespace baton::models
