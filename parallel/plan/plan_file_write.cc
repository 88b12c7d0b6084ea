// Plan files written: the plan's report as JSON (`baton plan --json`), the fields a run reads, and
// the graph fingerprint that ties a file to its model.
#include <algorithm>
#include <cstdio>
#include <string>

#include "parallel/plan/plan_file.h"

namespace baton::parallel {

nlohmann::json predicted_json(const EvaluatedPlan& e, double single_ms) {
  return {{"step_ms", e.predicted.step_ms},
          {"throughput", e.predicted.throughput},
          {"bubble_fraction", e.predicted.bubble_fraction},
          {"speedup", single_ms / e.predicted.step_ms},
          {"peak_memory_bytes", e.peak_memory_bytes},
          {"balance", e.balance},
          {"communication_bytes", e.communication_bytes}};
}

nlohmann::json plan_json(const EvaluatedPlan& e, const Profile& p, double single_ms) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const Stage& s : e.plan.stages) {
    const double batch = e.plan.micro_batch_size() / s.replicas;
    for (int n : s.nodes) {
      int64_t activation = p.nodes[n].saved_bytes_per_sample;
      for (int v : p.nodes[n].outputs) activation += p.values[v].bytes_per_sample;
      nodes.push_back({{"name", p.nodes[n].name},
                       {"type", p.nodes[n].type},
                       {"fwd_ms", p.fwd_ms(n, batch)},
                       {"bwd_ms", p.bwd_ms(n, batch)},
                       {"activation_bytes", static_cast<int64_t>(static_cast<double>(activation) * batch)},
                       {"param_bytes", p.nodes[n].param_bytes}});
    }
  }
  std::sort(nodes.begin(), nodes.end(), [&](const nlohmann::json& a, const nlohmann::json& b) {
    return a["name"].get<std::string>() < b["name"].get<std::string>();
  });
  // Back to topological order (sorting by name only made the lookup below simple).
  nlohmann::json ordered = nlohmann::json::array();
  for (const ProfiledNode& n : p.nodes) {
    auto it = std::lower_bound(
        nodes.begin(), nodes.end(), n.name,
        [](const nlohmann::json& a, const std::string& name) { return a["name"].get<std::string>() < name; });
    ordered.push_back(*it);
  }
  nlohmann::json stages = nlohmann::json::array();
  for (const StageSummary& row : e.table) {
    nlohmann::json names = nlohmann::json::array();
    for (int n : row.nodes) names.push_back(p.nodes[n].name);
    stages.push_back({{"nodes", names},
                      {"fwd_ms", row.fwd_ms},
                      {"bwd_ms", row.bwd_ms},
                      {"param_bytes", row.param_bytes},
                      {"boundary_bytes", row.boundary_bytes_out},
                      {"memory_bytes", row.memory_bytes},
                      {"in_flight", row.in_flight},
                      {"replicas", row.replicas},
                      {"devices", e.plan.stages[row.stage].devices}});
  }
  return {{"model", p.model},
          {"profile", {{"device", p.device}, {"source", p.source}}},
          {"partitioner", e.choice.partitioner},
          {"groups", e.choice.groups},
          {"stages_per_group", e.choice.stages},
          {"chunks_per_device", e.plan.chunks_per_device},
          {"batch", e.plan.batch},
          {"micro_batches", e.choice.micro_batches},
          {"step_micro_batches", e.plan.micro_batches},
          {"schedule", std::string(schedule_kind_name(e.choice.schedule))},
          {"nodes", ordered},
          {"stages", stages},
          {"predicted", predicted_json(e, single_ms)}};
}

nlohmann::json stage_nodes_json(const EvaluatedPlan& e, const Profile& p) {
  nlohmann::json stages = nlohmann::json::array();
  for (const Stage& stage : e.plan.stages) {
    nlohmann::json names = nlohmann::json::array();
    for (int n : stage.nodes) names.push_back(p.nodes[static_cast<size_t>(n)].name);
    stages.push_back({{"nodes", names}, {"replicas", stage.replicas}});
  }
  return stages;
}

nlohmann::json plan_file_json(const EvaluatedPlan& e, const Profile& p, const Cluster& cluster, double single_ms,
                              std::string_view grad_sync) {
  nlohmann::json out = plan_json(e, p, single_ms);
  int devices = 0;
  for (const Stage& s : e.plan.stages) {
    for (int d : s.devices) devices = std::max(devices, d + 1);
  }
  const std::string kind = cluster.device(0).name == "cpu" ? "cpu:" : "cuda:";
  nlohmann::json names = nlohmann::json::array();
  for (int d = 0; d < devices; ++d) names.push_back(kind + std::to_string(d));
  out["format"] = std::string(kPlanFileFormat);
  out["model_fingerprint"] = graph_fingerprint(p);
  out["grad_sync"] = std::string(grad_sync);
  out["devices"] = names;
  out["planned_with"] = {{"profile", profile_to_json(p)}, {"cluster", cluster_to_json(cluster)}};
  return out;
}

std::string graph_fingerprint(const Profile& structure) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64 bits
  const auto mix = [&](const std::string& text) {
    for (const char c : text + '\x1f') {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ull;
    }
  };
  const auto list = [](const std::vector<int>& ids) {
    std::string s;
    for (int id : ids) s += std::to_string(id) + ',';
    return s;
  };
  for (const ProfiledNode& n : structure.nodes) {
    mix(n.name);
    mix(n.type);
    mix(list(n.inputs));
    mix(list(n.outputs));
    mix(std::to_string(n.param_bytes));
  }
  for (const ProfiledValue& v : structure.values) {
    mix(v.name);
    mix(std::to_string(v.producer) + ':' + list(v.consumers) + ':' + std::to_string(v.bytes_per_sample));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace baton::parallel
