// Cost model: compute time, cut bytes, stage memory and the stage table.
#include "parallel/plan/cost_model.h"

#include <algorithm>
#include <cmath>

#include "runtime/core/error.h"

namespace baton::parallel {

double forward_ms(const Profile& profile, std::span<const int> nodes, double batch) {
  double ms = 0;
  for (int n : nodes) ms += profile.fwd_ms(n, batch);
  return ms;
}

double backward_ms(const Profile& profile, std::span<const int> nodes, double batch) {
  double ms = 0;
  for (int n : nodes) ms += profile.bwd_ms(n, batch);
  return ms;
}

int64_t param_bytes(const Profile& profile, std::span<const int> nodes) {
  int64_t bytes = 0;
  for (int n : nodes) bytes += profile.nodes[n].param_bytes;
  return bytes;
}

int64_t boundary_bytes_out(const Profile& profile, const std::vector<char>& in_set) {
  int64_t bytes = 0;
  for (const ProfiledValue& v : profile.values) {
    if (v.producer < 0 || !in_set[v.producer]) continue;
    const bool read_outside = std::any_of(v.consumers.begin(), v.consumers.end(), [&](int c) { return !in_set[c]; });
    if (read_outside) bytes += v.bytes_per_sample;
  }
  return bytes;
}

int64_t boundary_bytes_in(const Profile& profile, const std::vector<char>& in_set) {
  int64_t bytes = 0;
  for (const ProfiledValue& v : profile.values) {
    if (v.producer < 0 || in_set[v.producer]) continue;
    const bool read_inside = std::any_of(v.consumers.begin(), v.consumers.end(), [&](int c) { return in_set[c] != 0; });
    if (read_inside) bytes += v.bytes_per_sample;
  }
  return bytes;
}

int64_t cut_bytes(const Profile& profile, int position) {
  int64_t bytes = 0;
  for (const ProfiledValue& v : profile.values) {
    if (v.producer < 0 || v.producer >= position) continue;
    if (std::any_of(v.consumers.begin(), v.consumers.end(), [&](int c) { return c >= position; })) {
      bytes += v.bytes_per_sample;
    }
  }
  return bytes;
}

int64_t stash_bytes_per_sample(const Profile& profile, std::span<const int> nodes) {
  int64_t bytes = 0;
  for (int n : nodes) {
    bytes += profile.nodes[n].saved_bytes_per_sample;
    for (int v : profile.nodes[n].outputs) bytes += profile.values[v].bytes_per_sample;
  }
  return bytes;
}

StageWork stage_work(const Profile& profile, const Cluster& cluster, std::span<const int> nodes, double micro_batch,
                     std::span<const int> devices, AllReduceAlgorithm algorithm) {
  StageWork w;
  w.fwd_ms = forward_ms(profile, nodes, micro_batch);
  w.bwd_ms = backward_ms(profile, nodes, micro_batch);
  w.param_bytes = param_bytes(profile, nodes);
  w.optimizer_ms = profile.optimizer_ms_per_param_byte * static_cast<double>(w.param_bytes);
  if (devices.size() > 1 && w.param_bytes > 0) w.allreduce_ms = cluster.allreduce_ms(w.param_bytes, devices, algorithm);
  return w;
}

int64_t transfer_bytes(int64_t bytes_per_sample, double micro_batch) {
  return static_cast<int64_t>(std::llround(static_cast<double>(bytes_per_sample) * micro_batch));
}

double stage_period_ms(const StageWork& work, double activation_ms, double gradient_ms, int micro_batches,
                       int replicas) {
  const double r = replicas;
  const double compute = (work.fwd_ms + work.bwd_ms) / r + (work.allreduce_ms + work.optimizer_ms) / micro_batches;
  return std::max({compute, activation_ms / r, gradient_ms / r});
}

StageMemory stage_memory(const Profile& profile, std::span<const int> nodes, double micro_batch, int in_flight) {
  StageMemory m;
  m.params = param_bytes(profile, nodes);
  m.gradients = m.params;
  m.optimizer_state =
      static_cast<int64_t>(std::llround(profile.optimizer_state_factor * static_cast<double>(m.params)));
  m.activations = static_cast<int64_t>(
      std::llround(static_cast<double>(stash_bytes_per_sample(profile, nodes)) * micro_batch * in_flight));
  for (int n : nodes) m.workspace = std::max(m.workspace, profile.nodes[n].workspace_bytes);
  return m;
}

std::vector<StageSummary> stage_table(const Plan& plan, const Profile& profile, const std::vector<int>& in_flight) {
  BATON_CHECK(in_flight.empty() || static_cast<int>(in_flight.size()) == plan.num_stages(),
              "stage table: ", in_flight.size(), " in-flight counts for ", plan.num_stages(), " stages");
  std::vector<StageSummary> rows;
  for (int s = 0; s < plan.num_stages(); ++s) {
    const Stage& st = plan.stages[s];
    const double batch = plan.micro_batch_size();
    std::vector<char> in_set(profile.nodes.size(), 0);
    for (int n : st.nodes) in_set[n] = 1;
    StageSummary row;
    row.stage = s;
    row.nodes = st.nodes;
    row.replicas = st.replicas;
    row.fwd_ms = forward_ms(profile, st.nodes, batch);
    row.bwd_ms = backward_ms(profile, st.nodes, batch);
    row.param_bytes = param_bytes(profile, st.nodes);
    row.boundary_bytes_out = static_cast<int64_t>(
        std::llround(static_cast<double>(boundary_bytes_out(profile, in_set)) * plan.micro_batch_size()));
    row.in_flight = in_flight.empty() ? plan.micro_batches / st.replicas : in_flight[s];
    row.memory_bytes = stage_memory(profile, st.nodes, batch, row.in_flight).total();
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace baton::parallel
