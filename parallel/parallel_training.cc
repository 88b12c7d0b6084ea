// plan_pipeline and make_pipeline_engine (see parallel_training.h).
#include "parallel/parallel_training.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <thread>

#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/cluster_for_devices.h"
#include "parallel/plan/profiler.h"
#include "parallel/plan_file_run.h"
#include "runtime/core/cpu_threads.h"
#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

constexpr int kInterleavedChunks = 2;  // stages per position under the interleaved schedule

// What every data-parallel engine starts from: `parallel` checked (check_data_parallel_config), its
// model averaging and what an unused parameter is.
DataParallelOptions checked_data_parallel_options(const ParallelConfig& parallel, const TrainConfig& config) {
  check_data_parallel_config(parallel, config);
  DataParallelOptions options;
  options.averaging = model_averaging_of(parallel, parallel.data_parallel);
  options.sync.unused_parameters_ready = parallel.unused_parameters == UnusedParameters::ready;
  options.comm_backend = parallel.comm_backend;
  return options;
}

// The hybrid's model averaging: each stage's replicas across the G groups (G >= 2).
ModelAveraging hybrid_averaging_of(const ParallelConfig& p) {
  if (p.model_averaging == Averaging::none) return {};
  BATON_CHECK(p.groups >= 2, "--model-averaging ", averaging_name(p.model_averaging),
              " averages replicas: give --data-parallel N, or --groups G (G >= 2) with --stages S (a pipeline of one "
              "group has none)");
  return model_averaging_of(p, p.groups);
}

}  // namespace

std::unique_ptr<DataParallelEngine> make_data_parallel_engine(const Graph& graph, const TrainConfig& config,
                                                              const ParallelConfig& parallel) {
  DataParallelOptions options = checked_data_parallel_options(parallel, config);
  options.devices = data_parallel_devices(parallel, config);
  return std::make_unique<DataParallelEngine>(graph, config, std::move(options));
}

std::unique_ptr<DataParallelEngine> make_data_parallel_engine(const Graph& graph, const TrainConfig& config,
                                                              const ParallelConfig& parallel,
                                                              const comm::MpiRuntime& runtime) {
  DataParallelOptions options = checked_data_parallel_options(parallel, config);
  BATON_CHECK(parallel.data_parallel == runtime.size(), "--data-parallel ", parallel.data_parallel, " with ",
              runtime.size(), " MPI processes: give one replica per process (--data-parallel ", runtime.size(), ")");
  BATON_CHECK(parallel.devices.empty(),
              "--devices with several MPI processes: each process trains one replica, on the GPU of its local rank "
              "(--device cuda) or on cpu:0 (--device cpu)");
  BATON_CHECK(config.device == "auto" || config.device == "cpu" || config.device == "cuda", "--device ", config.device,
              " with several MPI processes: each process trains one replica, on the GPU of its local rank (--device "
              "cuda) or on cpu:0 (--device cpu)");
  const Device device = mpi_process_device(config, runtime);
  options.devices = {device};
  // The MPI world itself, or NCCL with its unique id sent over the world (comm/backend_table.h).
  options.communicators.push_back(comm::make_process_communicator(runtime.world(), device, parallel.comm_backend));
  return std::make_unique<DataParallelEngine>(graph, config, std::move(options));
}

CpuStageShare cpu_stage_share(int groups, int stages, bool processes) {
  CpuStageShare share;
  share.stage_threads = processes ? cpu_threads() : cpu_threads_per_worker({groups, stages});
  share.cores = processes ? std::max(1, static_cast<int>(std::thread::hardware_concurrency())) : cpu_cores_available();
  share.at_once = std::min(groups * stages, share.concurrent_compute());
  return share;
}

void CpuStageShare::apply(ProfilerOptions& options, bool processes) const {
  if (processes) return;  // a process's own threads; the other ranks measure beside it
  options.cpu_threads = stage_threads;
  options.busy_neighbours = at_once - 1;
}

int CpuStageShare::concurrent_compute() const { return std::max(1, cores / stage_threads); }

PipelineSetup plan_pipeline(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                            const ParallelConfig& p, RunReport* report, comm::Communicator* world) {
  if (!p.plan_file.empty()) return plan_pipeline_from_file(graph, model_name, config, p, report, world);
  check_parallel_config(p, config);
  // The model's node count bounds the stages: checked before anything sized by --stages is made.
  const int chunks = p.schedule == ScheduleKind::interleaved ? kInterleavedChunks : 1;
  const Profile structure = profile_structure(graph, model_name);
  BATON_CHECK(static_cast<int64_t>(structure.nodes.size()) >= int64_t{p.stages} * chunks, "--stages ", p.stages,
              chunks > 1 ? " (x2 chunks, interleaved)" : "", ": the model has only ", structure.nodes.size(),
              " nodes to split into ", int64_t{p.stages} * chunks, " stages");
  PipelineSetup setup;
  setup.available = pipeline_devices(p, config);
  PlanChoice choice;
  choice.partitioner = partitioner_name(p.partitioner);
  choice.schedule = p.schedule;
  choice.stages = p.stages;
  choice.groups = p.groups;
  choice.chunks = chunks;
  choice.micro_batches = micro_batch_count(p, config.batch_size);
  setup.micro_batch = static_cast<int>(config.batch_size / p.groups / choice.micro_batches);
  choice.free_replication = p.replication == Replication::free;
  if (choice.free_replication) choice.micro_batches *= p.groups;  // the step's: the same micro-batches
  // Across processes every process runs one stage replica: the plan uses all of them.
  choice.all_devices = choice.free_replication && world != nullptr;

  ProfilerOptions po;
  po.batch_sizes = {setup.micro_batch};
  po.warmup = 1;
  po.repeats = 3;
  po.optimizer = config.optimizer.value("type", std::string("sgd"));
  po.allow_tf32 = config.tf32;
  po.channels_last = config.channels_last;
  po.seed = config.seed;
  // CPU stage times are measured as a stage worker sees them (CpuStageShare). Rank 0's profile is
  // the one used; across processes the ranks that fit on the cores measure at the same time, so each
  // is the others' neighbour.
  const bool cpu = setup.available.front().is_cpu();
  const CpuStageShare share = cpu_stage_share(p.groups, p.stages, world != nullptr);
  const int stage_threads = share.stage_threads;
  const int at_once = share.at_once;
  if (cpu) share.apply(po, world != nullptr);
  const bool measures = world == nullptr || world->rank() == 0 || (cpu && world->rank() < at_once);
  if (report && (world == nullptr || world->rank() == 0)) {
    report->line("profiling " + model_name + " on " + setup.available.front().str() + " at micro-batch " +
                 std::to_string(setup.micro_batch) +
                 (cpu ? " with " + std::to_string(stage_threads) + (stage_threads == 1 ? " thread" : " threads") +
                            " per stage, " + std::to_string(at_once) + " stage(s) computing at once"
                      : std::string()) +
                 " (1 warm-up, 3 repeats)...");
  }
  if (measures) setup.profile = measure_profile(graph, model_name, setup.available.front(), po);
  if (world != nullptr) setup.profile = share_profile(*world, setup.profile);
  // Across processes on GPUs every process has a GPU of its own (the one of its local rank).
  const bool gpu_per_process = world != nullptr && setup.available.front().is_cuda();
  setup.cluster = cluster_for_devices(
      gpu_per_process ? std::vector<Device>(static_cast<size_t>(world->size()), setup.available.front())
                      : setup.available,
      p.stages * p.groups);
  // CPU stages (threads or processes of this machine) share its cores: the simulator time-slices
  // them over as many places as the cores hold stage workers.
  if (cpu) setup.cluster.set_concurrent_compute(share.concurrent_compute());
  if (world != nullptr && cpu && world->size() > 1) {
    // Processes of this machine pass activations through MPI, not a memcpy: measure that link.
    const Link link = measure_process_link(*world);
    for (int a = 0; a < setup.cluster.num_devices(); ++a) {
      for (int b = a + 1; b < setup.cluster.num_devices(); ++b) setup.cluster.set_link(a, b, link);
    }
    if (report && world->rank() == 0) {
      char line[160];
      std::snprintf(line, sizeof line, "link between processes (MPI ping-pong): %.2f GB/s, %.1f us", link.bandwidth_gbs,
                    link.latency_us);
      report->line(line);
    }
  }
  PlanSettings settings;
  settings.batch = static_cast<int>(config.batch_size);
  settings.memory_cap_bytes = 1e300;  // the run itself finds out whether it fits
  settings.record_trace = !p.trace.empty();
  setup.planned = evaluate_plan(choice, setup.profile, setup.cluster, settings);
  if (world != nullptr) share_plan(*world, setup.profile, setup.planned);
  const Plan& plan = setup.planned.plan;
  if (unequal_replication(plan)) {  // one pipeline, a device per stage replica
    setup.stage_devices = stage_replica_devices(plan, setup.available);
    return setup;
  }
  setup.stage_devices = stage_devices(setup.planned.schedule, plan.num_stages(), setup.available);
  if (plan.stages.front().replicas > 1) setup.group_devices = hybrid_devices(plan, setup.available);
  return setup;
}

std::unique_ptr<PipelineTrainEngine> make_pipeline_engine(const Graph& graph, const std::string& model_name,
                                                          const TrainConfig& config, const ParallelConfig& p,
                                                          const PipelineSetup& setup) {
  // The override is checked even where no communicator is made (one group of unreplicated stages).
  comm::choose_comm_backend(setup.stage_devices.front(), comm::Launcher::threads, p.comm_backend);
  PipelineTrainOptions options;
  options.devices = setup.stage_devices;
  options.group_devices = setup.group_devices;
  options.grad_sync = p.grad_sync;
  options.averaging = hybrid_averaging_of(p);
  options.unused_parameters_ready = p.unused_parameters == UnusedParameters::ready;
  options.recompute = p.recompute;
  options.deferred_batch_norm = p.deferred_bn;
  options.trace_steps = p.trace.empty() ? 0 : p.trace_steps;
  options.model = model_name;
  options.comm_backend = p.comm_backend;
  return std::make_unique<PipelineTrainEngine>(graph, config, setup.planned.plan, setup.planned.schedule, options);
}

std::unique_ptr<PipelineTrainEngine> make_pipeline_engine(const Graph& graph, const std::string& model_name,
                                                          const TrainConfig& config, const ParallelConfig& p,
                                                          const PipelineSetup& setup,
                                                          std::shared_ptr<comm::Communicator> world, Device device) {
  const int processes = p.groups * p.stages;
  BATON_CHECK(world->size() == processes, "--groups ", p.groups, " --stages ", p.stages, " across processes needs ",
              processes, " processes (one per group and stage), not ", world->size());
  BATON_CHECK(setup.planned.plan.chunks_per_device == 1,
              "the interleaved schedule across processes is not available yet (one stage per process)");
  PipelineTrainOptions options;
  options.devices = {device};  // each process's own
  options.world = std::move(world);
  options.grad_sync = p.grad_sync;
  options.averaging = hybrid_averaging_of(p);
  options.unused_parameters_ready = p.unused_parameters == UnusedParameters::ready;
  options.recompute = p.recompute;
  options.deferred_batch_norm = p.deferred_bn;
  options.model = model_name;
  options.trace_steps = p.trace.empty() ? 0 : p.trace_steps;
  options.comm_backend = p.comm_backend;
  return std::make_unique<PipelineTrainEngine>(graph, config, setup.planned.plan, setup.planned.schedule, options);
}

ParallelTraining make_parallel_training(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                                        const ParallelConfig& parallel,
                                        const std::function<void(const std::string&)>& progress) {
  ParallelTraining out;
  const ParallelConfig p = with_plan_file(parallel);  // the plan file's grad_sync too
  FunctionReport report(progress);
  out.setup = plan_pipeline(graph, model_name, config, p, &report);
  out.engine = make_pipeline_engine(graph, model_name, config, p, out.setup);
  return out;
}

}  // namespace baton::parallel
