// plan_pipeline and make_pipeline_engine (see parallel_training.h).
#include "parallel/parallel_training.h"

#include <sstream>

#include "parallel/analytic_profile.h"
#include "parallel/cluster_for_devices.h"
#include "parallel/profiler.h"
#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

constexpr int kInterleavedChunks = 2;  // stages per position under the interleaved schedule

}  // namespace

namespace {

std::vector<Device> listed_devices(const std::string& list_text) {
  std::vector<Device> out;
  std::stringstream list(list_text);
  for (std::string name; std::getline(list, name, ',');) {
    BATON_CHECK(!name.empty(), "--devices '", list_text, "': an empty device name");
    const Device d = Device::parse(name);
    check_device(d);
    out.push_back(d);
  }
  return out;
}

}  // namespace

std::vector<Device> pipeline_devices(const ParallelConfig& p, const TrainConfig& config) {
  if (!p.devices.empty()) return listed_devices(p.devices);
  std::vector<Device> out;
  const int gpus = cuda_device_count();
  if (config.device == "auto" && gpus > 0) {
    for (int i = 0; i < std::min(gpus, p.stages); ++i) out.push_back(Device::cuda(i));
    return out;
  }
  const Device d = config.device == "auto" ? Device::cpu() : Device::parse(config.device);
  check_device(d);
  if (d.is_cuda()) return {d};
  for (int i = 0; i < p.stages; ++i) out.push_back(Device::cpu(i));
  return out;
}

std::vector<Device> data_parallel_devices(const ParallelConfig& p, const TrainConfig& config) {
  std::vector<Device> out;
  if (!p.devices.empty()) {
    out = listed_devices(p.devices);
    BATON_CHECK(static_cast<int>(out.size()) == p.data_parallel, "--devices lists ", out.size(), " device(s) for ",
                p.data_parallel, " data-parallel replicas (give one per replica)");
  } else {
    BATON_CHECK(
        config.device == "auto" || config.device == "cpu", "--data-parallel with --device ", config.device,
        ": replicas run on the virtual CPU devices cpu:0..N-1 (--device cpu) or on the devices --devices lists");
    for (int i = 0; i < p.data_parallel; ++i) out.push_back(Device::cpu(i));
  }
  for (const Device& d : out) {
    BATON_CHECK(d.is_cpu(), "--data-parallel on ", d.str(),
                ": replicas on GPUs need the NCCL backend, which is not available yet; use CPU devices "
                "(docs/data-parallel.md)");
  }
  return out;
}

std::unique_ptr<DataParallelEngine> make_data_parallel_engine(const Graph& graph, const TrainConfig& config,
                                                              const ParallelConfig& parallel) {
  check_data_parallel_config(parallel, config);
  DataParallelOptions options;
  options.devices = data_parallel_devices(parallel, config);
  options.sync.unused_parameters_ready = parallel.unused_parameters == "ready";
  return std::make_unique<DataParallelEngine>(graph, config, std::move(options));
}

std::unique_ptr<DataParallelEngine> make_data_parallel_engine(const Graph& graph, const TrainConfig& config,
                                                              const ParallelConfig& parallel,
                                                              const comm::MpiRuntime& runtime) {
  check_data_parallel_config(parallel, config);
  BATON_CHECK(parallel.data_parallel == runtime.size(), "--data-parallel ", parallel.data_parallel, " with ",
              runtime.size(), " MPI processes: give one replica per process (--data-parallel ", runtime.size(), ")");
  BATON_CHECK(parallel.devices.empty(),
              "--devices with several MPI processes: each process trains one replica, on "
              "cpu:0 (GPUs need the NCCL backend, which is not available yet)");
  BATON_CHECK(config.device == "auto" || config.device == "cpu", "--device ", config.device,
              " with several MPI processes: each process trains one replica, on cpu:0 (GPUs need the NCCL backend, "
              "which is not available yet)");
  DataParallelOptions options;
  options.devices = {Device::cpu(0)};
  options.sync.unused_parameters_ready = parallel.unused_parameters == "ready";
  options.communicators.push_back(runtime.world());
  return std::make_unique<DataParallelEngine>(graph, config, std::move(options));
}

PipelineSetup plan_pipeline(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                            const ParallelConfig& p, const std::function<void(const std::string&)>& progress) {
  check_parallel_config(p, config);
  PipelineSetup setup;
  setup.available = pipeline_devices(p, config);
  PlanChoice choice;
  choice.partitioner = p.partitioner;
  choice.schedule = parse_schedule_kind(p.schedule);
  choice.stages = p.stages;
  choice.chunks = choice.schedule == ScheduleKind::interleaved ? kInterleavedChunks : 1;
  choice.micro_batches = micro_batch_count(p, config.batch_size);
  setup.micro_batch = static_cast<int>(config.batch_size / choice.micro_batches);
  const Profile structure = profile_structure(graph, model_name);
  const int model_stages = choice.stages * choice.chunks;
  BATON_CHECK(static_cast<int>(structure.nodes.size()) >= model_stages, "--stages ", p.stages,
              choice.chunks > 1 ? " (x2 chunks, interleaved)" : "", ": the model has only ", structure.nodes.size(),
              " nodes to split into ", model_stages, " stages");

  if (progress) {
    progress("profiling " + model_name + " on " + setup.available.front().str() + " at micro-batch " +
             std::to_string(setup.micro_batch) + " (1 warm-up, 3 repeats)...");
  }
  ProfilerOptions po;
  po.batch_sizes = {setup.micro_batch};
  po.warmup = 1;
  po.repeats = 3;
  po.optimizer = config.optimizer.value("type", std::string("sgd"));
  po.allow_tf32 = config.tf32;
  po.seed = config.seed;
  setup.profile = measure_profile(graph, model_name, setup.available.front(), po);
  setup.cluster = cluster_for_devices(setup.available, p.stages);
  PlanSettings settings;
  settings.batch = static_cast<int>(config.batch_size);
  settings.memory_cap_bytes = 1e300;  // the run itself finds out whether it fits
  settings.record_trace = !p.trace.empty();
  setup.planned = evaluate_plan(choice, setup.profile, setup.cluster, settings);
  setup.stage_devices = stage_devices(setup.planned.schedule, setup.planned.plan.num_stages(), setup.available);
  return setup;
}

std::unique_ptr<PipelineTrainEngine> make_pipeline_engine(const Graph& graph, const std::string& model_name,
                                                          const TrainConfig& config, const ParallelConfig& p,
                                                          const PipelineSetup& setup) {
  PipelineTrainOptions options;
  options.devices = setup.stage_devices;
  options.recompute = p.recompute;
  options.deferred_batch_norm = p.deferred_bn;
  options.trace_steps = p.trace.empty() ? 0 : p.trace_steps;
  options.model = model_name;
  return std::make_unique<PipelineTrainEngine>(graph, config, setup.planned.plan, setup.planned.schedule, options);
}

ParallelTraining make_parallel_training(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                                        const ParallelConfig& parallel,
                                        const std::function<void(const std::string&)>& progress) {
  ParallelTraining out;
  out.setup = plan_pipeline(graph, model_name, config, parallel, progress);
  out.engine = make_pipeline_engine(graph, model_name, config, parallel, out.setup);
  return out;
}

}  // namespace baton::parallel
