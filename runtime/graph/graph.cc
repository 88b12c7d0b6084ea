// Graph construction, checks, topological order and JSON.
#include "runtime/graph/graph.h"

#include <algorithm>
#include <queue>

#include "runtime/core/error.h"

namespace baton {

ValueId Graph::add_value(const std::string& name, const Shape& shape, DType dtype, NodeId producer, int output) {
  BATON_CHECK(!name.empty(), "a graph value needs a name");
  BATON_CHECK(!value_ids_.contains(name), "duplicate value name '", name, "'");
  const ValueId id = num_values();
  values_.push_back(ValueInfo{name, shape, dtype, producer, output, {}});
  value_ids_.emplace(name, id);
  return id;
}

ValueId Graph::add_input(const std::string& name, const Shape& shape, DType dtype) {
  const ValueId id = add_value(name, shape, dtype, -1, 0);
  inputs_.push_back(id);
  return id;
}

std::vector<ValueId> Graph::add_node(const std::string& name, LayerPtr layer, const std::vector<ValueId>& inputs) {
  BATON_CHECK(!name.empty(), "a graph node needs a name");
  BATON_CHECK(!node_ids_.contains(name), "duplicate node name '", name, "'");
  BATON_CHECK(layer != nullptr, "node '", name, "' has no layer");
  const int expected = layer->num_inputs();
  BATON_CHECK(expected < 0 ? !inputs.empty() : static_cast<int>(inputs.size()) == expected, "node '", name, "' (",
              layer->type(), ") takes ", expected < 0 ? std::string("one or more") : std::to_string(expected), " input",
              expected == 1 ? "" : "s", ", got ", inputs.size());
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (ValueId v : inputs) {
    BATON_CHECK(v >= 0 && v < num_values(), "node '", name, "': input value id ", v, " does not exist");
    shapes.push_back(values_[static_cast<size_t>(v)].shape);
    dtypes.push_back(values_[static_cast<size_t>(v)].dtype);
  }
  std::vector<Shape> out_shapes;
  std::vector<DType> out_dtypes;
  try {
    out_shapes = layer->infer_shapes(shapes);
    out_dtypes = layer->infer_dtypes(dtypes);
  } catch (Error& e) {
    std::string ins;
    for (size_t i = 0; i < inputs.size(); ++i) {
      ins += (i ? ", " : "") + values_[static_cast<size_t>(inputs[i])].name + " " + shapes[i].str();
    }
    e.add_context("in node '" + name + "' (" + std::string(layer->type()) + ") with inputs " + ins);
    throw;
  }
  BATON_CHECK(out_shapes.size() == out_dtypes.size() && !out_shapes.empty(), "node '", name,
              "': layer reports inconsistent outputs");
  const NodeId id = num_nodes();
  Node node{name, std::move(layer), inputs, {}};
  for (size_t k = 0; k < out_shapes.size(); ++k) {
    const std::string value_name = k == 0 ? name : name + ":" + std::to_string(k);
    node.outputs.push_back(add_value(value_name, out_shapes[k], out_dtypes[k], id, static_cast<int>(k)));
  }
  for (ValueId v : inputs) values_[static_cast<size_t>(v)].consumers.push_back(id);
  nodes_.push_back(std::move(node));
  node_ids_.emplace(name, id);
  return nodes_.back().outputs;
}

void Graph::mark_output(ValueId v) {
  BATON_CHECK(v >= 0 && v < num_values(), "mark_output: value id ", v, " does not exist");
  if (std::find(outputs_.begin(), outputs_.end(), v) == outputs_.end()) outputs_.push_back(v);
}

const ValueInfo& Graph::value(ValueId id) const {
  BATON_CHECK(id >= 0 && id < num_values(), "value id ", id, " does not exist");
  return values_[static_cast<size_t>(id)];
}

const Node& Graph::node(NodeId id) const {
  BATON_CHECK(id >= 0 && id < num_nodes(), "node id ", id, " does not exist");
  return nodes_[static_cast<size_t>(id)];
}

ValueId Graph::value_id(std::string_view name) const {
  const auto it = value_ids_.find(std::string(name));
  BATON_CHECK(it != value_ids_.end(), "no value named '", name, "' in the graph");
  return it->second;
}

NodeId Graph::node_id(std::string_view name) const {
  const auto it = node_ids_.find(std::string(name));
  BATON_CHECK(it != node_ids_.end(), "no node named '", name, "' in the graph");
  return it->second;
}

std::vector<NodeId> Graph::topological_order() const {
  std::vector<int> pending(nodes_.size());
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (ValueId v : nodes_[n].inputs) pending[n] += values_[static_cast<size_t>(v)].producer >= 0 ? 1 : 0;
  }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (pending[n] == 0) ready.push(static_cast<NodeId>(n));
  }
  std::vector<NodeId> order;
  while (!ready.empty()) {
    const NodeId n = ready.top();
    ready.pop();
    order.push_back(n);
    for (ValueId v : nodes_[static_cast<size_t>(n)].outputs) {
      for (NodeId c : values_[static_cast<size_t>(v)].consumers) {
        if (--pending[static_cast<size_t>(c)] == 0) ready.push(c);
      }
    }
  }
  BATON_CHECK(order.size() == nodes_.size(), "the graph has a cycle");
  return order;
}

void Graph::validate() const {
  BATON_CHECK(!outputs_.empty(), "the graph has no outputs (mark the loss or the logits as an output)");
  for (ValueId v : inputs_) {
    BATON_CHECK(!values_[static_cast<size_t>(v)].consumers.empty(), "graph input '",
                values_[static_cast<size_t>(v)].name, "' is not used by any node");
  }
  for (ValueId id = 0; id < num_values(); ++id) {
    const ValueInfo& v = values_[static_cast<size_t>(id)];
    const bool is_output = std::find(outputs_.begin(), outputs_.end(), id) != outputs_.end();
    BATON_CHECK(!v.consumers.empty() || is_output || v.producer < 0, "value '", v.name,
                "' is produced but neither used nor a graph output (dangling)");
  }
  topological_order();
}

namespace {

nlohmann::json shape_json(const Shape& s) { return s.dims(); }

Shape shape_from_json(const nlohmann::json& j, const std::string& where) {
  BATON_CHECK(j.is_array(), where, ": 'shape' must be a list of integers, got ", j.dump());
  std::vector<int64_t> dims;
  for (const auto& d : j) {
    BATON_CHECK(d.is_number_integer() && d.get<int64_t>() >= 0, where, ": 'shape' entries must be integers >= 0, got ",
                d.dump());
    dims.push_back(d.get<int64_t>());
  }
  return Shape(dims);
}

const nlohmann::json& required(const nlohmann::json& obj, const char* field, const std::string& where) {
  BATON_CHECK(obj.is_object() && obj.contains(field), where, ": missing field '", field, "'");
  return obj.at(field);
}

std::string string_field(const nlohmann::json& obj, const char* field, const std::string& where) {
  const nlohmann::json& v = required(obj, field, where);
  BATON_CHECK(v.is_string() && !v.get<std::string>().empty(), where, ": field '", field,
              "' must be a non-empty string, got ", v.dump());
  return v.get<std::string>();
}

}  // namespace

nlohmann::json Graph::to_json() const {
  nlohmann::json j;
  j["format"] = "baton.graph/1";
  j["inputs"] = nlohmann::json::array();
  for (ValueId v : inputs_) {
    const ValueInfo& info = values_[static_cast<size_t>(v)];
    j["inputs"].push_back({{"name", info.name}, {"shape", shape_json(info.shape)}, {"dtype", dtype_name(info.dtype)}});
  }
  j["layers"] = nlohmann::json::array();
  for (NodeId n : topological_order()) {
    const Node& node = nodes_[static_cast<size_t>(n)];
    nlohmann::json ins = nlohmann::json::array();
    for (ValueId v : node.inputs) ins.push_back(values_[static_cast<size_t>(v)].name);
    j["layers"].push_back({{"name", node.name},
                           {"type", std::string(node.layer->type())},
                           {"inputs", ins},
                           {"params", node.layer->config()}});
  }
  j["outputs"] = nlohmann::json::array();
  for (ValueId v : outputs_) j["outputs"].push_back(values_[static_cast<size_t>(v)].name);
  return j;
}

Graph Graph::from_json(const nlohmann::json& spec, const LayerRegistry& registry, std::string_view source) {
  const std::string src(source);
  BATON_CHECK(spec.is_object(), src, ": a graph spec must be a JSON object, got ", spec.type_name());
  if (spec.contains("format")) {
    BATON_CHECK(spec["format"] == "baton.graph/1", src, ": field 'format' is ", spec["format"].dump(),
                ", expected \"baton.graph/1\"");
  }
  for (const auto& [key, value] : spec.items()) {
    BATON_CHECK(key == "format" || key == "inputs" || key == "layers" || key == "outputs", src, ": unknown field '",
                key, "'; expected format, inputs, layers, outputs");
  }
  Graph g;
  const nlohmann::json& inputs = required(spec, "inputs", src);
  BATON_CHECK(inputs.is_array() && !inputs.empty(), src, ": 'inputs' must be a non-empty list");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string where = src + ": inputs[" + std::to_string(i) + "]";
    const std::string name = string_field(inputs[i], "name", where);
    DType dtype = kDefaultDType;
    if (inputs[i].contains("dtype")) {
      try {
        dtype = parse_dtype(string_field(inputs[i], "dtype", where));
      } catch (Error& e) {
        e.add_context("in " + where);
        throw;
      }
    }
    g.add_input(name, shape_from_json(required(inputs[i], "shape", where), where), dtype);
  }
  const nlohmann::json& layers = required(spec, "layers", src);
  BATON_CHECK(layers.is_array(), src, ": 'layers' must be a list");
  // Add layers whose inputs exist, repeatedly: the spec may list them in any order.
  std::vector<bool> added(layers.size(), false);
  size_t remaining = layers.size();
  while (remaining > 0) {
    size_t progress = 0;
    for (size_t i = 0; i < layers.size(); ++i) {
      if (added[i]) continue;
      const nlohmann::json& l = layers[i];
      const std::string where = src + ": layers[" + std::to_string(i) + "]";
      const std::string name = string_field(l, "name", where);
      const std::string lwhere = src + ": layer '" + name + "'";
      for (const auto& [key, value] : l.items()) {
        BATON_CHECK(key == "name" || key == "type" || key == "inputs" || key == "params", lwhere, ": unknown field '",
                    key, "'; expected name, type, inputs, params");
      }
      const nlohmann::json& ins = required(l, "inputs", lwhere);
      BATON_CHECK(ins.is_array() && !ins.empty(), lwhere, ": 'inputs' must be a non-empty list of value names");
      std::vector<ValueId> input_ids;
      bool ready = true;
      for (const auto& in : ins) {
        BATON_CHECK(in.is_string(), lwhere, ": 'inputs' entries must be value names, got ", in.dump());
        if (!g.has_value(in.get<std::string>())) {
          ready = false;
          break;
        }
        input_ids.push_back(g.value_id(in.get<std::string>()));
      }
      if (!ready) continue;
      const std::string type = string_field(l, "type", lwhere);
      std::unique_ptr<Layer> layer;
      try {
        layer = registry.create(type, l.contains("params") ? l["params"] : nlohmann::json::object());
        g.add_node(name, std::move(layer), input_ids);
      } catch (Error& e) {
        e.add_context("in " + lwhere);
        throw;
      }
      added[i] = true;
      --remaining;
      ++progress;
    }
    if (progress == 0) {
      // Every remaining layer waits for a value that never appears: unknown names or a cycle.
      for (size_t i = 0; i < layers.size(); ++i) {
        if (added[i]) continue;
        for (const auto& in : layers[i]["inputs"]) {
          const std::string v = in.get<std::string>();
          if (g.has_value(v)) continue;
          bool produced_later = false;
          for (size_t k = 0; k < layers.size(); ++k) {
            produced_later = produced_later || (!added[k] && layers[k].contains("name") && layers[k]["name"] == v);
          }
          BATON_CHECK(produced_later, src, ": layer '", layers[i]["name"].get<std::string>(), "' reads value '", v,
                      "', which no input or layer defines");
        }
      }
      std::string cycle;
      for (size_t i = 0; i < layers.size(); ++i) {
        if (!added[i]) cycle += (cycle.empty() ? "" : ", ") + layers[i]["name"].get<std::string>();
      }
      BATON_FAIL(src, ": the layers ", cycle, " form a cycle");
    }
  }
  const nlohmann::json& outputs = required(spec, "outputs", src);
  BATON_CHECK(outputs.is_array() && !outputs.empty(), src, ": 'outputs' must be a non-empty list of value names");
  for (const auto& o : outputs) {
    BATON_CHECK(o.is_string() && g.has_value(o.get<std::string>()), src, ": output ", o.dump(),
                " is not a value of the graph");
    g.mark_output(g.value_id(o.get<std::string>()));
  }
  try {
    g.validate();
  } catch (Error& e) {
    e.add_context("in " + src);
    throw;
  }
  return g;
}

}  // namespace baton
