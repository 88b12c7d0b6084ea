// `baton bench pipeline`, parts 2 and 3: a real model's training step on one device (plain executor,
// and the pipeline executor with one stage) versus an S-stage 1F1B pipeline split by the block
// partitioner on a profile measured on the device, with the simulator's predicted step beside each.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "models/model_registry.h"
#include "parallel/pipeline/pipeline_executor.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/planner.h"
#include "parallel/plan/profiler.h"
#include "runtime/core/cpu_threads.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "runtime/graph/executor.h"
#include "runtime/train/optimizer.h"
#include "tools/bench_pipeline.h"

namespace baton::cli {
namespace {

using namespace baton::parallel;  // NOLINT

constexpr double kLr = 1e-4;  // small: the weights barely move over the timed steps
const nlohmann::json kSgd = {{"type", "sgd"}, {"momentum", 0.9}};

// The whole model in one Executor: zero gradients, forward, backward, SGD step, synchronise.
WallTimes time_plain_executor(const PipelineBenchSettings& s, const Graph& graph) {
  const Device device = s.stage_devices.front();
  Context ctx(device);
  const std::vector<NodeId> order = graph.topological_order();
  ParamStore params(graph, order, DType::f32, ctx);
  params.initialize(ctx, 1);
  Executor executor(graph, order, params);
  auto optimizer = make_optimizer(kSgd, params, ctx, "bench pipeline");
  const std::vector<Tensor> batch = random_graph_inputs(graph, s.batch, device, device);
  std::vector<Tensor> inputs;
  const std::vector<ValueId>& graph_inputs = graph.inputs();
  for (ValueId v : executor.input_values()) {
    inputs.push_back(
        batch[static_cast<size_t>(std::find(graph_inputs.begin(), graph_inputs.end(), v) - graph_inputs.begin())]);
  }
  uint64_t seed = 0;
  return time_wall(s.warmup, s.repeats, [&] {
    params.zero_grads(ctx);
    Tape tape;
    executor.forward(ctx, inputs, tape, Mode::train, ++seed);
    executor.backward(ctx, tape, std::vector<Tensor>(executor.output_values().size()));
    optimizer->step(ctx, kLr);
    ctx.synchronize();
  });
}

// `plan` (stage devices: cluster ids, mapped to s.stage_devices) through the pipeline executor.
WallTimes time_pipeline(const PipelineBenchSettings& s, const Graph& graph, const Plan& plan,
                        const Schedule& schedule) {
  std::vector<Device> devices;
  for (const Stage& st : plan.stages) devices.push_back(s.stage_devices.at(static_cast<size_t>(st.devices.at(0))));
  PipelineOptions options;
  options.optimizer = kSgd;
  options.model = s.model;
  PipelineExecutor pipe(graph, plan, schedule, devices, options);
  pipe.initialize(1);
  const std::vector<Tensor> batch = random_graph_inputs(graph, s.batch, devices.front(), devices.back());
  uint64_t seed = 0;
  return time_wall(s.warmup, s.repeats, [&] { pipe.step(batch, {.seed = ++seed, .lr = kLr}); });
}

// The cluster the simulator sees: for CPU virtual devices the shipped cpu-S (this machine's
// measured memcpy rate); for GPUs the measured profile carries the compute, so only the links and
// the memory cap matter: streams of one GPU exchange tensors without a copy (a free link), several
// GPUs are assumed to be on PCIe 5 (25 GB/s, 10 µs; an NVLink machine transfers faster).
Cluster bench_cluster(const PipelineBenchSettings& s, bool one_gpu) {
  if (s.device.is_cpu()) return cluster_by_name("cpu-" + std::to_string(s.stages));
  DeviceSpec spec;
  spec.name = "measured";
  for (const GpuInfo& gpu : query_system_info().gpus) {
    if (gpu.index == s.device.index()) spec.memory_gb = static_cast<double>(gpu.total_memory_bytes) / 1e9;
  }
  if (spec.memory_gb <= 0) spec.memory_gb = 1e6;  // unknown: no cap
  const Link link = one_gpu ? Link{"memory", 1e9, 0} : Link{"pcie", 25, 10};
  return Cluster::topology(one_gpu ? "one-gpu-streams" : "gpus", spec, 1, s.stages, link, link);
}

double throughput(int batch, double ms) { return batch / ms * 1000.0; }
double error_percent(double predicted, double measured) { return 100.0 * (predicted - measured) / measured; }

}  // namespace

namespace {

models::ModelOptions throughput_model_options(const PipelineBenchSettings& s) {
  models::ModelOptions options = models::default_options(s.model);
  options.batch_size = s.batch;
  if (s.image_size > 0) options.image_size = s.image_size;
  return options;
}

}  // namespace

void check_pipeline_throughput_settings(const PipelineBenchSettings& s, bool micro_batches_given) {
  BATON_CHECK(s.batch % s.micro_batches == 0, "--batch ", s.batch, " must be divisible by --micro-batches ",
              s.micro_batches, micro_batches_given ? "" : " (the default, 2 x --stages)");
  const Profile structure = profile_structure(models::build_model(s.model, throughput_model_options(s)), s.model);
  BATON_CHECK(static_cast<int>(structure.nodes.size()) >= s.stages, "--stages ", s.stages, ": the model ", s.model,
              " has only ", structure.nodes.size(), " nodes to split into stages");
}

nlohmann::json bench_pipeline_throughput(const PipelineBenchSettings& s) {
  const int S = s.stages, M = s.micro_batches;
  const models::ModelOptions options = throughput_model_options(s);
  const Graph graph = models::build_model(s.model, options);
  const int micro = s.batch / M;
  const unsigned cores = std::thread::hardware_concurrency();
  const bool one_gpu = s.device.is_cuda() && std::all_of(s.stage_devices.begin(), s.stage_devices.end(),
                                                         [&](Device d) { return d == s.stage_devices.front(); });
  // Stages share hardware: streams of one GPU, or more CPU workers than cores.
  const bool shared = one_gpu || (s.device.is_cpu() && cores < static_cast<unsigned>(S));

  std::printf("\n== throughput: %s %lldx%lld, batch %d, f32, SGD; %d stages x %d micro-batches of %d, 1F1B ==\n",
              s.model.c_str(), static_cast<long long>(options.image_size), static_cast<long long>(options.image_size),
              s.batch, S, M, micro);
  std::printf("profiling %s on %s at batch sizes %d and %d (%d warm-up, median of %d)\n", s.model.c_str(),
              s.stage_devices.front().str().c_str(), micro, s.batch, s.profile_warmup, s.profile_repeats);
  std::fflush(stdout);
  ProfilerOptions profiler;
  profiler.batch_sizes = {micro, s.batch};
  profiler.warmup = s.profile_warmup;
  profiler.repeats = s.profile_repeats;
  profiler.allow_tf32 = false;  // as the executors' contexts
  const Profile profile = measure_profile(graph, s.model, s.stage_devices.front(), profiler);
  // CPU virtual devices: each of the S stage workers computes with its share of this thread's CPU
  // threads, so the S-stage plan is priced on a profile measured with that share.
  const int stage_threads = s.device.is_cpu() ? cpu_threads_per_worker(S) : 0;
  ProfilerOptions stage_profiler = profiler;
  stage_profiler.cpu_threads = stage_threads;
  // ... beside the other stage workers that fit on the cores (concurrent_compute queues the rest).
  const int at_once = s.device.is_cpu() ? std::min(S, std::max(1, cpu_cores_available() / stage_threads)) : 1;
  stage_profiler.busy_neighbours = at_once - 1;
  const Profile stage_profile = s.device.is_cpu() && (stage_threads != cpu_threads() || at_once > 1)
                                    ? measure_profile(graph, s.model, s.stage_devices.front(), stage_profiler)
                                    : profile;
  Cluster cluster = bench_cluster(s, one_gpu);
  // The stage workers share this process's cores: as many compute at once as the cores hold.
  if (s.device.is_cpu()) cluster.set_concurrent_compute(std::max(1, cpu_cores_available() / stage_threads));
  PlanSettings settings;
  settings.batch = s.batch;
  const EvaluatedPlan single = single_device_plan(profile, cluster, settings);
  const EvaluatedPlan pipelined =
      evaluate_plan({.partitioner = "block", .stages = S, .micro_batches = M}, stage_profile, cluster, settings);
  // The same work on one device in series (one stage, M micro-batches): what S stages cost when
  // they cannot run at the same time.
  const EvaluatedPlan serial =
      evaluate_plan({.partitioner = "block", .stages = 1, .micro_batches = M}, stage_profile, cluster, settings);

  const WallTimes plain = time_plain_executor(s, graph);
  const WallTimes one_stage = time_pipeline(s, graph, single.plan, single.schedule);
  const WallTimes staged = time_pipeline(s, graph, pipelined.plan, pipelined.schedule);

  // CPU virtual devices: S workers of `stage_threads` threads on `cores` hardware threads finish no
  // sooner than the work in series spread over the workers that can run at once, nor sooner than
  // the pipeline with cores of its own per stage.
  std::optional<double> core_bound;
  if (s.device.is_cpu()) {
    const int usable = std::max(1, std::min(S, static_cast<int>(cores) / std::max(1, stage_threads)));
    core_bound = std::max(pipelined.predicted.step_ms, serial.predicted.step_ms / usable);
  }
  const char* headline_name = one_gpu ? "in_series" : core_bound ? "core_bound" : "pipeline";
  const double headline = one_gpu ? serial.predicted.step_ms : core_bound.value_or(pipelined.predicted.step_ms);

  std::printf("stages of the plan (block partitioner on the measured profile%s):\n",
              stage_threads > 0 ? (" with " + std::to_string(stage_threads) + " thread(s) per stage").c_str() : "");
  nlohmann::json stages = nlohmann::json::array();
  for (const StageSummary& row : pipelined.table) {
    const std::string first = profile.nodes[row.nodes.front()].name, last = profile.nodes[row.nodes.back()].name;
    const Device device = s.stage_devices.at(static_cast<size_t>(pipelined.plan.stages[row.stage].devices[0]));
    std::printf("  stage %d on %-7s %3zu nodes %-18s .. %-18s fwd %8.3f ms bwd %8.3f ms per micro-batch\n", row.stage,
                device.str().c_str(), row.nodes.size(), first.c_str(), last.c_str(), row.fwd_ms, row.bwd_ms);
    stages.push_back({{"stage", row.stage},
                      {"device", device.str()},
                      {"nodes", row.nodes.size()},
                      {"first", first},
                      {"last", last},
                      {"fwd_ms", row.fwd_ms},
                      {"bwd_ms", row.bwd_ms}});
  }
  std::printf("%-34s %10s %11s | %12s %9s\n", "configuration", "step ms", "samples/s", "predicted ms", "error");
  const auto line = [&](const char* name, const WallTimes& t, std::optional<double> predicted) {
    std::printf("%-34s %10.2f %11.1f | ", name, t.median_ms, throughput(s.batch, t.median_ms));
    if (predicted) {
      std::printf("%12.2f %+8.1f%%\n", *predicted, error_percent(*predicted, t.median_ms));
    } else {
      std::printf("%12s %9s\n", "", "");
    }
  };
  line("plain executor, 1 device", plain, std::nullopt);
  line("pipeline, 1 stage, 1 micro-batch", one_stage, single.predicted.step_ms);
  char name[64];
  std::snprintf(name, sizeof(name), "pipeline, %d stages, %d micro-b.", S, M);
  line(name, staged, pipelined.predicted.step_ms);
  std::printf("%-34s %10s %11s | %12.2f %+8.1f%%\n", "  same, simulated in series", "", "", serial.predicted.step_ms,
              error_percent(serial.predicted.step_ms, staged.median_ms));
  if (core_bound) {
    std::printf("%-34s %10s %11s | %12.2f %+8.1f%%\n", "  same, bound by the cores", "", "", *core_bound,
                error_percent(*core_bound, staged.median_ms));
  }
  const double speedup = one_stage.median_ms / staged.median_ms;
  std::printf("speedup of %d stages over 1 stage: %.2fx, %.0f%% of %dx (predicted %.2fx); host: %u hardware threads\n",
              S, speedup, 100.0 * speedup / S, S, single.predicted.step_ms / pipelined.predicted.step_ms, cores);
  if (one_gpu) {
    std::printf(
        "the stages are streams of one GPU: the simulator's %d devices would overlap them fully, so the\n"
        "comparison that counts is the in-series prediction (kernels that fill the GPU serialise)\n",
        S);
  } else if (s.device.is_cpu()) {
    std::printf(
        "the virtual devices share this machine's %u hardware threads (and with anything else running);\n"
        "the simulator gives each stage a core of its own%s\n",
        cores, shared ? "; with fewer cores than stages the bound by the cores is the one that counts" : "");
  }

  const auto measured = [&](const WallTimes& t) {
    return nlohmann::json{{"step_ms", t.median_ms},
                          {"step_min_ms", t.min_ms},
                          {"samples_per_s", throughput(s.batch, t.median_ms)},
                          {"samples_ms", t.samples_ms}};
  };
  nlohmann::json staged_json = measured(staged);
  staged_json["stages"] = S;
  staged_json["micro_batches"] = M;
  staged_json["partitioner"] = "block";
  staged_json["schedule"] = "1f1b";
  staged_json["plan"] = stages;
  return {{"model", s.model},
          {"image_size", options.image_size},
          {"batch", s.batch},
          {"micro_batch", micro},
          {"dtype", "f32"},
          {"optimizer", kSgd},
          {"warmup", s.warmup},
          {"repeats", s.repeats},
          {"profile",
           {{"batch_sizes", profiler.batch_sizes},
            {"warmup", s.profile_warmup},
            {"repeats", s.profile_repeats},
            {"device", profile.device},
            {"stage_cpu_threads", stage_threads}}},
          {"cluster", cluster.name()},
          {"hardware_threads", cores},
          {"stages_share_hardware", shared},
          {"plain_executor", measured(plain)},
          {"one_stage", measured(one_stage)},
          {"pipeline", staged_json},
          {"speedup", speedup},
          {"speedup_fraction_of_stages", speedup / S},
          {"predicted",
           {{"one_stage_step_ms", single.predicted.step_ms},
            {"one_stage_error_percent", error_percent(single.predicted.step_ms, one_stage.median_ms)},
            {"pipeline_step_ms", pipelined.predicted.step_ms},
            {"pipeline_error_percent", error_percent(pipelined.predicted.step_ms, staged.median_ms)},
            {"bubble_fraction", pipelined.predicted.bubble_fraction},
            {"in_series_step_ms", serial.predicted.step_ms},
            {"in_series_error_percent", error_percent(serial.predicted.step_ms, staged.median_ms)},
            {"core_bound_step_ms", core_bound ? nlohmann::json(*core_bound) : nlohmann::json(nullptr)},
            {"core_bound_error_percent",
             core_bound ? nlohmann::json(error_percent(*core_bound, staged.median_ms)) : nlohmann::json(nullptr)},
            {"headline", headline_name},
            {"headline_error_percent", error_percent(headline, staged.median_ms)},
            {"speedup", single.predicted.step_ms / pipelined.predicted.step_ms}}}};
}

}  // namespace baton::cli
