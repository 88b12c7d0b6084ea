// with_plan_file and plan_pipeline_from_file (see plan_file_run.h).
#include "parallel/plan_file_run.h"

#include <algorithm>

#include "parallel/comm/launch_environment.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/plan_file.h"
#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

// `field` (of flag `flag`) takes the plan's value; set to another value than its default, it is an
// error naming both (`name` spells a value).
template <typename T, typename Name>
void take_from_plan(T& field, const T& planned, const T& unset, const char* flag, const PlanFile& file, Name name) {
  BATON_CHECK(field == unset || field == planned, flag, " ", name(field), " contradicts the plan in ", file.path, " (",
              name(planned), "): drop ", flag, " or edit the plan");
  field = planned;
}

template <typename T>
void take_from_plan(T& field, const T& planned, const T& unset, const char* flag, const PlanFile& file) {
  take_from_plan(field, planned, unset, flag, file, [](const T& value) -> const T& { return value; });
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

}  // namespace

ParallelConfig with_plan_file(const ParallelConfig& parallel) {
  if (parallel.plan_file.empty()) return parallel;
  const PlanFile file = read_plan_file(parallel.plan_file);
  BATON_CHECK(parallel.data_parallel == 0, "--data-parallel ", parallel.data_parallel, " with the plan in ", file.path,
              ": the plan decides each stage's replicas (its stages[].replicas); drop --data-parallel");
  const bool unequal = file.unequal_replication();
  const comm::LaunchEnvironment launch = comm::launch_environment();
  BATON_CHECK(launch.size == 1 || launch.size == file.units(), launch.launcher, " started ", launch.size,
              " processes for the plan in ", file.path, ", which runs ", file.units(),
              " stage replicas, one process each: start ", file.units());
  const ParallelConfig unset;
  ParallelConfig p = parallel;
  // Unequal replicas run as free replication over its stage replicas, one device each.
  take_from_plan(p.stages, unequal ? file.units() : file.positions(), unset.stages, "--stages", file);
  take_from_plan(p.groups, file.groups(), unset.groups, "--groups", file);
  take_from_plan(p.micro_batches, file.micro_batches, unset.micro_batches, "--micro-batches", file);
  take_from_plan(p.schedule, file.schedule, unset.schedule, "--schedule", file, schedule_kind_name);
  take_from_plan(p.replication, unequal ? Replication::free : Replication::equal, unset.replication, "--replication",
                 file, replication_name);
  const std::vector<std::string> known = partitioner_names();
  const bool named = std::find(known.begin(), known.end(), file.partitioner) != known.end();
  take_from_plan(p.partitioner,
                 unequal ? PartitionerKind::antichain
                 : named ? parse_partitioner(file.partitioner)
                         : unset.partitioner,
                 unset.partitioner, "--partitioner", file, partitioner_name);
  take_from_plan(p.grad_sync, parse_grad_sync(file.grad_sync), unset.grad_sync, "--grad-sync", file, grad_sync_name);
  take_from_plan(p.devices, joined(file.devices), unset.devices, "--devices", file);
  return p;
}

PipelineSetup plan_pipeline_from_file(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                                      const ParallelConfig& parallel, RunReport* report, comm::Communicator* world) {
  const ParallelConfig p = with_plan_file(parallel);
  check_parallel_config(p, config);
  const PlanFile file = read_plan_file(p.plan_file);
  PipelineSetup setup;
  Plan plan = plan_of_file(file, profile_structure(graph, model_name), config.batch_size);
  setup.available = plan_file_devices(file, world != nullptr);
  const bool gpu_device = config.device.starts_with("cuda");  // --device: auto, cpu, cuda or cuda:N
  BATON_CHECK(world != nullptr || config.device == "auto" || gpu_device == setup.available.front().is_cuda(),
              "--device ", config.device, " contradicts the plan in ", file.path, " (its devices are ",
              joined(file.devices), "): drop --device or edit the plan's devices");
  if (world != nullptr) {
    // As --replication free across processes: exactly one process per stage replica, each on its own device.
    BATON_CHECK(world->size() == file.units(), file.path, ": the plan runs ", file.units(),
                " stage replicas, one per process, but the job has ", world->size(), " processes");
    BATON_CHECK(plan.num_devices() == file.units(), file.path,
                ": field 'stages': expected a device of its own for each stage replica (one process each); ",
                file.units(), " replicas share ", plan.num_devices(), " devices");
    const bool gpu_processes = config.device == "cuda" || (config.device == "auto" && cuda_device_count() > 0);
    BATON_CHECK(setup.available.front().is_cuda() == gpu_processes, file.path, ": field 'devices': expected ",
                gpu_processes ? "GPUs" : "CPU devices", ", as the processes run on, not ", file.devices.front());
  }
  setup.micro_batch = file.batch / file.step_micro_batches;
  setup.profile = file.profile;
  setup.cluster = file.cluster;
  PlanChoice choice;
  choice.partitioner = file.partitioner;
  choice.groups = file.groups();
  choice.stages = file.unequal_replication() ? static_cast<int>(file.stages.size()) : file.positions();
  choice.chunks = file.chunks_per_device;
  choice.micro_batches = file.micro_batches;
  choice.schedule = file.schedule;
  choice.free_replication = file.unequal_replication();
  choice.all_devices = choice.free_replication && world != nullptr;
  PlanSettings settings;
  settings.batch = file.batch;
  settings.memory_cap_bytes = 1e300;  // the run itself finds out whether it fits
  settings.record_trace = !p.trace.empty();
  if (report && (world == nullptr || world->rank() == 0)) {
    report->line("running the plan in " + file.path +
                 " as written (no profiling, no re-planning); its predicted step " + "from the " + file.profile.source +
                 " profile on " + file.profile.device + ", cluster " + file.cluster.name());
  }
  setup.planned = evaluate_split_plan(choice, std::move(plan), file.profile, file.cluster, settings);
  const Plan& planned = setup.planned.plan;
  if (choice.free_replication) {  // one pipeline, a device per stage replica
    setup.stage_devices = stage_replica_devices(planned, setup.available);
    return setup;
  }
  for (const Stage& stage : planned.stages) setup.stage_devices.push_back(setup.available.at(stage.devices.front()));
  if (choice.groups > 1) setup.group_devices = hybrid_devices(planned, setup.available);
  return setup;
}

}  // namespace baton::parallel
