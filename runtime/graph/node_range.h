// NodeRange: a set of graph nodes in topological order and its boundary — the values it reads but
// does not produce, and the values it produces that are read outside it or are graph outputs. An
// Executor runs one; a pipeline's routing connects stages by their boundaries.
#pragma once

#include <vector>

#include "runtime/graph/graph.h"

namespace baton {

struct NodeRange {
  std::vector<NodeId> nodes;     // topological order
  std::vector<ValueId> inputs;   // read, not produced here (first reader's order)
  std::vector<ValueId> outputs;  // produced here, read outside or a graph output (production order)
};

// `nodes` in any order (not empty, no node twice).
NodeRange node_range(const Graph& graph, std::vector<NodeId> nodes);

}  // namespace baton
