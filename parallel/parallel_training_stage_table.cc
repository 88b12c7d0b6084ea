// The stage table of a plan (see parallel_training.h).
#include "parallel/parallel_training.h"
#include "runtime/train/progress.h"

namespace baton::parallel {
namespace {

std::string node_range(const Profile& p, const std::vector<int>& nodes) {
  if (nodes.size() == 1) return p.nodes[nodes.front()].name;
  return p.nodes[nodes.front()].name + " .. " + p.nodes[nodes.back()].name;
}

std::string devices_text(const std::vector<int>& devices) {
  std::string s;
  for (int d : devices) {
    if (!s.empty()) s += ',';
    s += std::to_string(d);
  }
  return s;
}

}  // namespace

std::string stage_table_text(const EvaluatedPlan& e, const Profile& p, const std::vector<std::string>& device_names) {
  std::string text = formatted("%-5s %-6s %-44s %9s %9s %10s %11s %10s %4s %-10s", "stage", "nodes", "range", "fwd ms",
                               "bwd ms", "params MB", "boundary MB", "memory GB", "rep", "devices");
  for (const StageSummary& row : e.table) {
    const std::string devices = static_cast<size_t>(row.stage) < device_names.size()
                                    ? device_names[static_cast<size_t>(row.stage)]
                                    : devices_text(e.plan.stages[row.stage].devices);
    text += formatted("\n%-5d %-6zu %-44s %9.3f %9.3f %10.2f %11.3f %10.2f %4d %-10s", row.stage, row.nodes.size(),
                      node_range(p, row.nodes).substr(0, 44).c_str(), row.fwd_ms, row.bwd_ms,
                      static_cast<double>(row.param_bytes) / 1e6, static_cast<double>(row.boundary_bytes_out) / 1e6,
                      static_cast<double>(row.memory_bytes) / 1e9, row.replicas, devices.c_str());
  }
  return text;
}

}  // namespace baton::parallel
