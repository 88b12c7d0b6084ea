// The partitioner registry, the uniform baseline and the stage cost the partitioners balance.
#include "parallel/plan/partitioner.h"

#include <algorithm>

#include "parallel/plan/cost_model.h"
#include "runtime/core/error.h"

namespace baton::parallel {

void check_request(const PartitionRequest& r) {
  BATON_CHECK(r.profile != nullptr && r.cluster != nullptr, "partition: a profile and a cluster are required");
  BATON_CHECK(r.stages >= 1, "partition: --stages must be >= 1 (got ", r.stages, ")");
  BATON_CHECK(r.replicas >= 1, "partition: replicas (groups) must be >= 1 (got ", r.replicas, ")");
  BATON_CHECK(r.chunks_per_device >= 1 && r.stages % r.chunks_per_device == 0, "partition: ", r.stages,
              " stages cannot be spread as ", r.chunks_per_device, " chunks per device");
  BATON_CHECK(r.stages <= r.profile->num_nodes(), "partition: ", r.stages, " stages for a model of ",
              r.profile->num_nodes(), " nodes: every stage needs at least one node");
  BATON_CHECK(r.micro_batches >= 1 && r.batch >= 1 && r.batch % r.micro_batches == 0, "partition: the batch (", r.batch,
              ") is not divisible by the number of micro-batches (", r.micro_batches, ")");
  const int devices = r.free_replication ? r.devices : r.stages / r.chunks_per_device * r.replicas;
  BATON_CHECK(devices >= 1 && devices <= r.cluster->num_devices(), "partition: the plan needs ", devices,
              " devices but cluster '", r.cluster->name(), "' has ", r.cluster->num_devices());
  if (!r.free_replication) {
    BATON_CHECK(r.micro_batches % r.replicas == 0, "partition: ", r.replicas,
                " replicas of each stage take whole micro-batches in turn: the ", r.micro_batches,
                " micro-batches of a step must be a multiple of ", r.replicas);
  }
}

int in_flight_bound(const PartitionRequest& request, int stage, int stages, int replicas) {
  const int taken = request.micro_batches / replicas;  // the micro-batches one replica takes
  if (request.schedule == ScheduleKind::gpipe) return taken;
  return std::min(stages - stage, taken);
}

double memory_cap_bytes(const PartitionRequest& request) {
  if (request.memory_cap_bytes > 0) return request.memory_cap_bytes;
  const double gb = request.cluster->device(0).memory_gb;
  return gb > 0 ? gb * 1e9 : 1e300;
}

double stage_time_ms(const PartitionRequest& r, const std::vector<int>& nodes, int replicas, int first_device,
                     int next_device) {
  const Profile& profile = *r.profile;
  const double micro_batch = static_cast<double>(r.batch) / r.micro_batches;
  const int stride = r.free_replication ? 1 : r.stages / r.chunks_per_device;
  std::vector<int> devices;
  for (int k = 0; k < replicas; ++k) devices.push_back((first_device + k * stride) % r.cluster->num_devices());
  const StageWork work = stage_work(profile, *r.cluster, nodes, micro_batch, devices);
  double activation_ms = 0, gradient_ms = 0;
  if (next_device >= 0) {
    std::vector<char> in_set(profile.nodes.size(), 0);
    for (int n : nodes) in_set[n] = 1;
    const int64_t bytes = transfer_bytes(boundary_bytes_out(profile, in_set), micro_batch);
    activation_ms = r.cluster->p2p_ms(bytes, first_device, next_device);
    gradient_ms = r.cluster->p2p_ms(bytes, next_device, first_device);
  }
  return stage_period_ms(work, activation_ms, gradient_ms, r.micro_batches, replicas);
}

double plan_bottleneck_ms(const PartitionRequest& request, const Plan& plan) {
  double worst = 0;
  int first = 0;  // consecutive devices (free replication)
  for (int s = 0; s < plan.num_stages(); ++s) {
    const Stage& stage = plan.stages[s];
    const bool last = s + 1 == plan.num_stages();
    int dev = stage.devices.front(), next = last ? -1 : plan.stages[s + 1].devices.front();
    if (request.free_replication) {
      dev = first;
      next = last ? -1 : first + stage.replicas;
    }
    worst = std::max(worst, stage_time_ms(request, stage.nodes, stage.replicas, dev, next));
    first += stage.replicas;
  }
  return worst;
}

Plan partition_uniform(const PartitionRequest& r) {
  check_request(r);
  const int n = r.profile->num_nodes();
  Plan plan;
  plan.model = r.profile->model;
  plan.partitioner = "uniform";
  plan.batch = r.batch;
  plan.micro_batches = r.micro_batches;
  plan.chunks_per_device = r.chunks_per_device;
  // Equal node counts along the topological order; the first n % S stages take one node more.
  int next = 0;
  for (int s = 0; s < r.stages; ++s) {
    Stage stage;
    const int count = n / r.stages + (s < n % r.stages ? 1 : 0);
    for (int k = 0; k < count; ++k) stage.nodes.push_back(next++);
    stage.replicas = r.replicas;
    plan.stages.push_back(std::move(stage));
  }
  assign_devices(plan);
  validate_plan(plan, *r.profile);
  const double cap = memory_cap_bytes(r);
  for (int s = 0; s < r.stages; ++s) {
    const StageMemory m = stage_memory(*r.profile, plan.stages[s].nodes, plan.micro_batch_size(),
                                       in_flight_bound(r, s, r.stages, r.replicas));
    BATON_CHECK(static_cast<double>(m.total()) <= cap, "partition uniform: stage ", s, " needs ",
                static_cast<double>(m.total()) / 1e9, " GB, over the memory cap of ", cap / 1e9,
                " GB (try more stages, more micro-batches or a smaller batch)");
  }
  return plan;
}

}  // namespace baton::parallel
