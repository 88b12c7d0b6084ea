// `baton train` through the pipeline executor (see train_pipeline.h).
#include "tools/train_pipeline.h"

#include <cstdio>
#include <sstream>

#include "parallel/analytic_profile.h"
#include "parallel/pipeline/pipeline_trainer.h"
#include "parallel/planner.h"
#include "parallel/profiler.h"
#include "parallel/trace.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "tools/stage_table.h"

namespace baton::cli {
namespace {

using namespace baton::parallel;

constexpr int kInterleavedChunks = 2;  // stages per position under --schedule interleaved
constexpr int kTracedSteps = 10;       // --trace records the first this-many steps

int default_micro_batches(int stages, int64_t batch) {
  for (int m = 4 * stages; m > 1; --m) {
    if (m <= batch && batch % m == 0) return m;
  }
  return 1;
}

// The devices of the pipeline positions: --devices, or from --device (auto: every GPU, else CPU
// virtual devices; cpu: S virtual devices; cuda:N: that GPU, one stream per stage).
std::vector<Device> available_devices(const PipelineFlags& f, const TrainConfig& config) {
  std::vector<Device> out;
  if (!f.devices.empty()) {
    std::stringstream list(f.devices);
    for (std::string name; std::getline(list, name, ',');) {
      BATON_CHECK(!name.empty(), "--devices '", f.devices, "': an empty device name");
      const Device d = Device::parse(name);
      check_device(d);
      out.push_back(d);
    }
    return out;
  }
  const int gpus = cuda_device_count();
  if (config.device == "auto" && gpus > 0) {
    for (int i = 0; i < std::min(gpus, f.stages); ++i) out.push_back(Device::cuda(i));
    return out;
  }
  const Device d = config.device == "auto" ? Device::cpu() : Device::parse(config.device);
  check_device(d);
  if (d.is_cuda()) return {d};
  for (int i = 0; i < f.stages; ++i) out.push_back(Device::cpu(i));
  return out;
}

}  // namespace

void check_pipeline_flags(const PipelineFlags& f, const TrainConfig& config, bool device_given) {
  if (f.stages == 0 && !f.any_given) return;
  BATON_CHECK(f.stages >= 1, "--stages must be at least 1 (got ", f.stages, "); the pipeline flags need --stages S");
  BATON_CHECK(f.micro_batches >= 0, "--micro-batches must be at least 1 (got ", f.micro_batches, ")");
  const int m = f.micro_batches > 0 ? f.micro_batches : default_micro_batches(f.stages, config.batch_size);
  BATON_CHECK(config.batch_size % m == 0, "--micro-batches ", m, " does not divide the batch size ", config.batch_size);
  (void)parse_schedule_kind(f.schedule);
  BATON_CHECK(f.devices.empty() || !device_given, "give --devices LIST or --device, not both");
}

TrainSummary train_pipelined(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                             const PipelineFlags& f, const data::Dataset& train_set, const data::Dataset* test_set,
                             const std::function<bool()>& stop_requested) {
  const std::vector<Device> available = available_devices(f, config);
  PlanChoice choice;
  choice.partitioner = f.partitioner;
  choice.schedule = parse_schedule_kind(f.schedule);
  choice.stages = f.stages;
  choice.chunks = choice.schedule == ScheduleKind::interleaved ? kInterleavedChunks : 1;
  choice.micro_batches = f.micro_batches > 0 ? f.micro_batches : default_micro_batches(f.stages, config.batch_size);
  const int micro_batch = static_cast<int>(config.batch_size / choice.micro_batches);
  const Profile structure = profile_structure(graph, model_name);
  const int model_stages = choice.stages * choice.chunks;
  BATON_CHECK(static_cast<int>(structure.nodes.size()) >= model_stages, "--stages ", f.stages,
              choice.chunks > 1 ? " (x2 chunks, interleaved)" : "", ": the model has only ", structure.nodes.size(),
              " nodes to split into ", model_stages, " stages");

  // Compute times measured on the first device at the micro-batch size; the cluster says how the
  // positions are linked (CPU virtual devices share memory: cpu-S).
  std::printf("profiling %s on %s at micro-batch %d (1 warm-up, 3 repeats)...\n", model_name.c_str(),
              available.front().str().c_str(), micro_batch);
  std::fflush(stdout);
  ProfilerOptions po;
  po.batch_sizes = {micro_batch};
  po.warmup = 1;
  po.repeats = 3;
  po.optimizer = config.optimizer.value("type", std::string("sgd"));
  po.allow_tf32 = config.tf32;
  po.seed = config.seed;
  const Profile profile = measure_profile(graph, model_name, available.front(), po);
  const bool gpus = available.front().is_cuda();
  BATON_CHECK(!gpus || f.stages <= 8, "--stages ", f.stages, " on GPUs: at most 8 pipeline positions are modelled");
  const Cluster cluster = cluster_by_name(gpus ? std::string("h200-nvlink-8") : "cpu-" + std::to_string(f.stages));
  PlanSettings settings;
  settings.batch = static_cast<int>(config.batch_size);
  settings.memory_cap_bytes = 1e300;  // the run itself finds out whether it fits
  settings.record_trace = !f.trace_path.empty();
  EvaluatedPlan planned = evaluate_plan(choice, profile, cluster, settings);

  const std::vector<Device> devices = stage_devices(planned.schedule, planned.plan.num_stages(), available);
  std::vector<std::string> names;
  for (const Device& d : devices) names.push_back(d.str());
  std::printf("pipeline: %s, %s profile on %s, cluster %s, batch %lld (micro-batch %d)\n", planned.label().c_str(),
              profile.source.c_str(), profile.device.c_str(), cluster.name().c_str(),
              static_cast<long long>(config.batch_size), micro_batch);
  print_stage_table(planned, profile, names);
  std::fflush(stdout);

  PipelineTrainOptions options;
  options.devices = devices;
  options.recompute = f.recompute;
  options.deferred_batch_norm = f.deferred_bn;
  options.trace_steps = f.trace_path.empty() ? 0 : kTracedSteps;
  options.model = model_name;
  PipelineTrainEngine engine(graph, config, planned.plan, planned.schedule, options);
  Trainer trainer(graph, config, train_set, test_set, engine);
  const TrainSummary summary = trainer.run(stop_requested);

  const double measured = engine.measured_step_ms();
  const size_t steps = engine.step_ms().size();
  std::printf("step time: predicted %.3f ms, measured %.3f ms (median of %zu steps%s), measured / predicted %.2fx\n",
              planned.predicted.step_ms, measured, steps > 1 ? steps - 1 : steps, steps > 1 ? " after the first" : "",
              planned.predicted.step_ms > 0 ? measured / planned.predicted.step_ms : 0.0);
  if (!f.trace_path.empty()) {
    std::vector<TraceEvent> events = planned.predicted.events;
    std::vector<TraceLane> lanes = planned.predicted.lanes;
    for (TraceEvent& e : engine.executor().take_trace()) events.push_back(std::move(e));
    for (const TraceLane& l : engine.executor().trace_lanes()) lanes.push_back(l);
    write_chrome_trace(f.trace_path, chrome_trace_json(events, lanes, {"predicted", "measured"}));
    std::printf("wrote the predicted step and %d measured steps to %s (open in Perfetto or chrome://tracing)\n",
                std::min<int>(kTracedSteps, static_cast<int>(steps)), f.trace_path.c_str());
  }
  return summary;
}

}  // namespace baton::cli
