// Graph: named values (tensors flowing between layers) and named nodes (a layer applied to values).
// Shapes and dtypes are inferred as nodes are added, so a mistake is reported at the node that
// makes it. Serialises to and from JSON with PyTorch-style layer types and parameter names.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/graph/layer.h"
#include "runtime/graph/layer_registry.h"
#include "runtime/graph/precision.h"

namespace baton {

using ValueId = int;
using NodeId = int;

struct ValueInfo {
  std::string name;
  Shape shape;  // with the graph's nominal batch size in dimension 0
  DType dtype = kDefaultDType;
  NodeId producer = -1;  // -1: a graph input
  int producer_output = 0;
  std::vector<NodeId> consumers;
};

struct Node {
  std::string name;  // also the prefix of its parameters' names ("layer1.0.conv1" -> "layer1.0.conv1.weight")
  LayerPtr layer;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
};

class Graph {
 public:
  // Declares a graph input ("x" [N, 3, 32, 32] f32, "labels" [N] i64).
  ValueId add_input(const std::string& name, const Shape& shape, DType dtype);
  // Adds `layer` applied to `inputs`; returns its output values, named after the node (output k > 0
  // of a multi-output layer is "<name>:<k>"). Shape errors name the node and the mismatch.
  std::vector<ValueId> add_node(const std::string& name, LayerPtr layer, const std::vector<ValueId>& inputs);
  // Marks a value as a graph output (the loss, the logits).
  void mark_output(ValueId value);

  int num_values() const { return static_cast<int>(values_.size()); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const ValueInfo& value(ValueId id) const;
  const Node& node(NodeId id) const;
  // Throws baton::Error naming the missing value / node.
  ValueId value_id(std::string_view name) const;
  NodeId node_id(std::string_view name) const;
  bool has_value(std::string_view name) const { return value_ids_.contains(std::string(name)); }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }

  // Nodes in an order where every node comes after the producers of its inputs (stable: ties keep
  // insertion order).
  std::vector<NodeId> topological_order() const;
  // Structural checks: at least one output; every graph input is used; every value is consumed or
  // an output (no dangling value). Errors name the value.
  void validate() const;

  // {"format": "baton.graph/1", "inputs": [...], "layers": [{"name", "type", "inputs", "params"}], "outputs": [...]}
  nlohmann::json to_json() const;
  // `source` names the file (or other origin) in error messages. Layers may be listed in any order;
  // cycles, unknown values, duplicate names and bad layer configs are errors naming the layer.
  static Graph from_json(const nlohmann::json& spec, const LayerRegistry& registry, std::string_view source);

 private:
  ValueId add_value(const std::string& name, const Shape& shape, DType dtype, NodeId producer, int output);

  std::vector<ValueInfo> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::unordered_map<std::string, ValueId> value_ids_;
  std::unordered_map<std::string, NodeId> node_ids_;
};

}  // namespace baton
