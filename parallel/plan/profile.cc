// Profile: time lookups at any batch size, validation and JSON.
#include "parallel/plan/profile.h"

#include <algorithm>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/graph/json_fields.h"

namespace baton::parallel {
namespace {

// The longest time a profile may give a node at one batch size, or the optimiser step: a day. Longer
// ones (1e308 ms) are mistakes that would only surface as infinite step times in the simulator.
constexpr double kLongestProfiledMs = 24 * 3600 * 1e3;

// Piecewise-linear in the batch between measured sizes; proportional beyond either end.
double time_at(const std::vector<int>& sizes, const std::vector<double>& ms, double batch) {
  if (sizes.size() == 1 || batch <= sizes.front()) return ms.front() * batch / sizes.front();
  if (batch >= sizes.back()) return ms.back() * batch / sizes.back();
  size_t i = 1;
  while (sizes[i] < batch) ++i;
  const double t = (batch - sizes[i - 1]) / (sizes[i] - sizes[i - 1]);
  return ms[i - 1] + t * (ms[i] - ms[i - 1]);
}

}  // namespace

double Profile::fwd_ms(int node, double batch) const { return time_at(batch_sizes, nodes[node].fwd_ms, batch); }
double Profile::bwd_ms(int node, double batch) const { return time_at(batch_sizes, nodes[node].bwd_ms, batch); }

int64_t Profile::total_param_bytes() const {
  int64_t total = 0;
  for (const ProfiledNode& n : nodes) total += n.param_bytes;
  return total;
}

void Profile::validate(std::string_view where_) const {
  BATON_CHECK(!batch_sizes.empty(), where_, ": field 'batch_sizes': expected at least one batch size");
  for (size_t i = 0; i < batch_sizes.size(); ++i) {
    BATON_CHECK(batch_sizes[i] > 0 && (i == 0 || batch_sizes[i] > batch_sizes[i - 1]), where_,
                ": field 'batch_sizes': expected positive sizes in ascending order");
  }
  BATON_CHECK(!nodes.empty(), where_, ": field 'nodes': expected at least one node");
  const int num_values = static_cast<int>(values.size());
  for (int n = 0; n < num_nodes(); ++n) {
    const ProfiledNode& node = nodes[n];
    const std::string where = std::string(where_) + ": node " + std::to_string(n) + " ('" + node.name + "')";
    BATON_CHECK(node.fwd_ms.size() == batch_sizes.size() && node.bwd_ms.size() == batch_sizes.size(), where,
                ": expected one fwd_ms and one bwd_ms per batch size (", batch_sizes.size(), ")");
    for (size_t i = 0; i < batch_sizes.size(); ++i) {
      BATON_CHECK(node.fwd_ms[i] >= 0 && node.bwd_ms[i] >= 0, where, ": times must be >= 0");
      for (const auto& [field, ms] : {std::pair{"fwd_ms", node.fwd_ms[i]}, std::pair{"bwd_ms", node.bwd_ms[i]}}) {
        BATON_CHECK(ms <= kLongestProfiledMs, where, ": ", field, "[", i, "] = ", ms, " ms is out of range (at most ",
                    kLongestProfiledMs, " ms, a day, per node and batch)");
      }
    }
    BATON_CHECK(node.param_bytes >= 0 && node.saved_bytes_per_sample >= 0 && node.workspace_bytes >= 0, where,
                ": byte counts must be >= 0");
    for (int v : node.inputs) {
      BATON_CHECK(v >= 0 && v < num_values, where, ": input value index ", v, " out of range");
      const int p = values[v].producer;
      BATON_CHECK(p < n, where, ": reads value '", values[v].name, "' produced by a later node (", p,
                  "): nodes must be in topological order");
      BATON_CHECK(std::find(values[v].consumers.begin(), values[v].consumers.end(), n) != values[v].consumers.end(),
                  where, ": value '", values[v].name, "' does not list this node among its consumers");
    }
    for (int v : node.outputs) {
      BATON_CHECK(v >= 0 && v < num_values, where, ": output value index ", v, " out of range");
      BATON_CHECK(values[v].producer == n, where, ": value '", values[v].name, "' names another producer");
    }
  }
  for (int v = 0; v < num_values; ++v) {
    const ProfiledValue& value = values[v];
    const std::string where = std::string(where_) + ": value " + std::to_string(v) + " ('" + value.name + "')";
    BATON_CHECK(value.producer >= -1 && value.producer < num_nodes(), where, ": producer out of range");
    BATON_CHECK(value.bytes_per_sample >= 0, where, ": bytes_per_sample must be >= 0");
    for (int c : value.consumers) {
      BATON_CHECK(c >= 0 && c < num_nodes(), where, ": consumer ", c, " out of range");
      const auto& in = nodes[c].inputs;
      BATON_CHECK(std::find(in.begin(), in.end(), v) != in.end(), where, ": consumer ", c, " does not read this value");
    }
  }
  BATON_CHECK(optimizer_state_factor >= 0 && optimizer_ms_per_param_byte >= 0, where_,
              ": optimizer_state_factor and optimizer_ms_per_param_byte must be >= 0");
  BATON_CHECK(optimizer_ms_per_param_byte * static_cast<double>(total_param_bytes()) <= kLongestProfiledMs, where_,
              ": optimizer_ms_per_param_byte = ", optimizer_ms_per_param_byte,
              " is out of range (the optimiser step of ", total_param_bytes(), " parameter bytes would take more than ",
              kLongestProfiledMs, " ms, a day)");
}

nlohmann::json profile_to_json(const Profile& p) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const ProfiledNode& n : p.nodes) {
    nodes.push_back({{"name", n.name},
                     {"type", n.type},
                     {"inputs", n.inputs},
                     {"outputs", n.outputs},
                     {"fwd_ms", n.fwd_ms},
                     {"bwd_ms", n.bwd_ms},
                     {"param_bytes", n.param_bytes},
                     {"saved_bytes_per_sample", n.saved_bytes_per_sample},
                     {"workspace_bytes", n.workspace_bytes},
                     {"forward_macs_per_sample", n.forward_macs_per_sample}});
  }
  nlohmann::json values = nlohmann::json::array();
  for (const ProfiledValue& v : p.values) {
    values.push_back({{"name", v.name},
                      {"producer", v.producer},
                      {"consumers", v.consumers},
                      {"bytes_per_sample", v.bytes_per_sample},
                      {"graph_output", v.graph_output}});
  }
  return {{"format", "baton.profile/1"},
          {"model", p.model},
          {"device", p.device},
          {"source", p.source},
          {"dtype", p.dtype},
          {"batch_sizes", p.batch_sizes},
          {"optimizer_state_factor", p.optimizer_state_factor},
          {"optimizer_ms_per_param_byte", p.optimizer_ms_per_param_byte},
          {"nodes", nodes},
          {"values", values}};
}

namespace {}  // namespace

Profile profile_from_json(const nlohmann::json& json, std::string_view source) {
  const JsonFields top(json, source, "");
  top.allow_only({"format", "model", "device", "source", "dtype", "batch_sizes", "optimizer_state_factor",
                  "optimizer_ms_per_param_byte", "nodes", "values"});
  if (top.string("format") != "baton.profile/1") top.fail("format", "\"baton.profile/1\"");
  Profile p;
  p.model = top.string("model", "");
  p.device = top.string("device", "");
  p.source = top.string("source", "measured");
  p.dtype = top.string("dtype", "f32");
  p.batch_sizes = top.int32s("batch_sizes");
  p.optimizer_state_factor = top.non_negative("optimizer_state_factor", 1.0);
  p.optimizer_ms_per_param_byte = top.non_negative("optimizer_ms_per_param_byte", 0.0);
  for (const JsonFields& f : top.objects("nodes")) {
    f.allow_only({"name", "type", "inputs", "outputs", "fwd_ms", "bwd_ms", "param_bytes", "saved_bytes_per_sample",
                  "workspace_bytes", "forward_macs_per_sample"});
    ProfiledNode n;
    n.name = f.string("name");
    n.type = f.string("type", "");
    n.inputs = f.int32s("inputs");
    n.outputs = f.int32s("outputs");
    n.fwd_ms = f.numbers("fwd_ms");
    n.bwd_ms = f.numbers("bwd_ms");
    n.param_bytes = f.non_negative_integer("param_bytes", 0);
    n.saved_bytes_per_sample = f.non_negative_integer("saved_bytes_per_sample", 0);
    n.workspace_bytes = f.non_negative_integer("workspace_bytes", 0);
    n.forward_macs_per_sample = f.non_negative("forward_macs_per_sample", 0);
    p.nodes.push_back(std::move(n));
  }
  for (const JsonFields& f : top.objects("values")) {
    f.allow_only({"name", "producer", "consumers", "bytes_per_sample", "graph_output"});
    ProfiledValue v;
    v.name = f.string("name");
    v.producer = f.int32("producer");
    v.consumers = f.int32s("consumers");
    v.bytes_per_sample = f.non_negative_integer("bytes_per_sample");
    v.graph_output = f.boolean("graph_output", false);
    p.values.push_back(std::move(v));
  }
  p.validate(source);
  return p;
}

Profile load_profile(const std::string& path) { return profile_from_json(read_json_file(path), path); }

void save_profile(const Profile& profile, const std::string& path) { write_json_file(path, profile_to_json(profile)); }

}  // namespace baton::parallel
