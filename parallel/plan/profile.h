// Profile: what the planner knows about a model on a device — the DAG of nodes and the values
// between them, per-node forward/backward times at several micro-batch sizes, and the bytes of
// parameters, activations and workspace. Measured on a device or derived analytically; saved as JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace baton::parallel {

struct ProfiledValue {
  std::string name;
  int producer = -1;             // node index; -1: a graph input (data or labels)
  std::vector<int> consumers;    // node indices, ascending
  int64_t bytes_per_sample = 0;  // size of the value for one sample (batch dimension 1)
  bool graph_output = false;     // the loss or another output of the graph
};

struct ProfiledNode {
  std::string name;
  std::string type;
  std::vector<int> inputs;   // value indices
  std::vector<int> outputs;  // value indices
  // One entry per Profile::batch_sizes: milliseconds of forward and of backward (input and
  // parameter gradients) at that batch size.
  std::vector<double> fwd_ms;
  std::vector<double> bwd_ms;
  int64_t param_bytes = 0;             // parameters (gradients take as much again)
  int64_t saved_bytes_per_sample = 0;  // kept from forward for backward, per sample, beyond outputs
  int64_t workspace_bytes = 0;         // scratch the implementation asks for (largest batch size)
  double forward_macs_per_sample = 0;
};

struct Profile {
  std::string model;
  std::string device;  // the device measured, or the description used ("h200")
  std::string source;  // "measured" or "analytic"
  std::string dtype = "f32";
  std::vector<int> batch_sizes;     // ascending, at least one
  std::vector<ProfiledNode> nodes;  // topological order: a node's inputs come from earlier nodes
  std::vector<ProfiledValue> values;
  // Bytes of optimiser state per byte of parameters (1 for SGD with momentum, 2 for AdamW).
  double optimizer_state_factor = 1.0;
  // Milliseconds of the optimiser step per byte of parameters on this device.
  double optimizer_ms_per_param_byte = 0.0;

  int num_nodes() const { return static_cast<int>(nodes.size()); }
  // Times at any batch size (fractional: a micro-batch split across replicas): piecewise-linear
  // between measured sizes, proportional to the batch beyond the largest and below the smallest.
  double fwd_ms(int node, double batch) const;
  double bwd_ms(int node, double batch) const;
  int64_t total_param_bytes() const;

  // Structural checks (topological order, value indices in range, producers and consumers
  // agreeing, one time per batch size, non-negative numbers); errors name `where` and the field.
  void validate(std::string_view where) const;
};

// {"format": "baton.profile/1", "model", "device", "source", "dtype", "batch_sizes",
//  "optimizer_state_factor", "optimizer_ms_per_param_byte", "nodes": [...], "values": [...]}
nlohmann::json profile_to_json(const Profile& profile);
// `source` (a file name) appears in every error, with the field and what was expected.
Profile profile_from_json(const nlohmann::json& json, std::string_view source);
Profile load_profile(const std::string& path);
// Written atomically.
void save_profile(const Profile& profile, const std::string& path);

}  // namespace baton::parallel
