// `baton bench dp`: a model's training step (synthetic batch, CPU) through the data-parallel engine with
// 1 replica and with N (threads of this process, or one per process under mpirun): samples/s, scaling
// efficiency, the share of all-reduce hidden behind backward, the buckets, and the simulator's
// predicted step beside the measured one. Prints a table, writes JSON. See docs/data-parallel.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "models/model_registry.h"
#include "parallel/cluster_for_devices.h"
#include "parallel/comm/launch_environment.h"
#include "parallel/parallel_training.h"
#include "parallel/planner.h"
#include "parallel/profiler.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "tools/bench_timer.h"
#include "tools/commands.h"
#include "tools/rank_output.h"

namespace baton::cli {
namespace {

using namespace baton::parallel;  // NOLINT

constexpr double kLr = 1e-4;  // small: the weights barely move over the timed steps

struct Flags {
  std::string model = "resnet20";
  int batch = 64;  // global
  int steps = 10;
  int warmup = 2;
  int replicas = -1;  // not given: 2 in one process, the job's size under mpirun
  std::string json_path;
};

struct Setup {
  Flags f;
  int replicas = 2;
  bool mpi = false;
  int cores = 1;
  models::ModelOptions options;
  Graph graph;
  TrainConfig config;
};

// One engine's timed steps.
struct Measured {
  int replicas = 1;
  WallTimes times;
  std::vector<double> hidden, allreduce_ms;  // per timed step, replica 0 of this process
  std::vector<size_t> bucket_bytes;
};

// The simulator's steps for 1 and N replicas on a profile measured here, or why there are none.
struct Predicted {
  std::string unavailable;  // the reason; empty when available
  std::string cluster;
  double one = 0, replicated = 0, in_series = 0, core_bound = 0;
};

data::Batch synthetic_batch(const Graph& graph, int rows) {
  data::Batch batch;
  for (const Tensor& t : random_graph_inputs(graph, rows, Device::cpu(), Device::cpu())) {
    (t.dtype() == DType::i64 ? batch.labels : batch.images) = t;
  }
  return batch;
}

Measured measure(DataParallelEngine& engine, const Setup& s, int rows) {
  const data::Batch batch = synthetic_batch(s.graph, rows);
  engine.initialize(1);
  Measured m;
  m.replicas = engine.replicas();
  uint64_t seed = 0;
  m.times = time_wall(s.f.warmup, s.f.steps, [&] {
    engine.step(batch, ++seed, kLr);
    if (seed <= static_cast<uint64_t>(s.f.warmup)) return;
    const ReplicaStepRecord& last = engine.last_step(0);
    m.hidden.push_back(hidden_communication_fraction(last));
    double ms = 0;
    for (const BucketTiming& b : last.buckets) {
      if (b.ran.started && b.ran.finished)
        ms += std::chrono::duration<double, std::milli>(*b.ran.finished - *b.ran.started).count();
    }
    m.allreduce_ms.push_back(ms);
  });
  m.bucket_bytes = engine.last_step(0).bucket_bytes;
  return m;
}

Measured measure_in_process(const Setup& s, int replicas) {
  ParallelConfig parallel;
  parallel.data_parallel = replicas;
  const std::unique_ptr<DataParallelEngine> engine = make_data_parallel_engine(s.graph, s.config, parallel);
  return measure(*engine, s, s.f.batch);
}

Predicted predict(const Setup& s) {
  Predicted p;
  const int n = s.replicas, micro = s.f.batch / n;
  try {
    ProfilerOptions profiler;
    profiler.batch_sizes = n > 1 ? std::vector<int>{micro, s.f.batch} : std::vector<int>{s.f.batch};
    profiler.warmup = 1;
    profiler.repeats = 3;
    profiler.allow_tf32 = false;
    std::printf("profiling %s on cpu:0 at batch size%s %s%d (1 warm-up, median of 3) for the simulator\n",
                s.f.model.c_str(), n > 1 ? "s" : "", n > 1 ? (std::to_string(micro) + " and ").c_str() : "", s.f.batch);
    std::fflush(stdout);
    const Profile profile = measure_profile(s.graph, s.f.model, Device::cpu(), profiler);
    std::vector<Device> devices;
    for (int r = 0; r < n; ++r) devices.push_back(Device::cpu(r));
    const Cluster cluster = cluster_for_devices(devices, n);
    p.cluster = cluster.name();
    PlanSettings settings;
    settings.batch = s.f.batch;
    settings.bucket_bytes = static_cast<int64_t>(BucketOptions{}.first_bucket_bytes);
    p.one = single_device_plan(profile, cluster, settings).predicted.step_ms;
    p.replicated = evaluate_plan({.partitioner = "block", .groups = n, .stages = 1, .micro_batches = 1}, profile,
                                 cluster, settings)
                       .predicted.step_ms;
    // The N replicas' work one after another on one core; with fewer cores than replicas nothing
    // finishes sooner than that work spread over the cores.
    p.in_series = evaluate_plan({.partitioner = "block", .stages = 1, .micro_batches = n}, profile, cluster, settings)
                      .predicted.step_ms;
    p.core_bound = std::max(p.replicated, p.in_series / std::min(n, s.cores));
  } catch (const Error& e) {
    p.unavailable = e.what();
  }
  return p;
}

nlohmann::json measured_json(const Measured& m, int batch) {
  return {{"replicas", m.replicas},
          {"step_ms", m.times.median_ms},
          {"step_min_ms", m.times.min_ms},
          {"samples_per_s", batch / m.times.median_ms * 1e3},
          {"samples_ms", m.times.samples_ms}};
}

void report(const Setup& s, const Measured& one, const Measured& many, const Predicted& p) {
  const int n = s.replicas, batch = s.f.batch;
  const auto sps = [&](const Measured& m) { return batch / m.times.median_ms * 1e3; };
  const double efficiency = sps(many) / (n * sps(one));
  std::printf("%-28s %10s %11s | %12s %10s\n", "configuration", "step ms", "samples/s", "predicted ms", "meas/pred");
  const auto line = [&](const char* name, const Measured& m, double predicted) {
    std::printf("%-28s %10.2f %11.1f | ", name, m.times.median_ms, sps(m));
    if (p.unavailable.empty()) {
      std::printf("%12.2f %9.2fx\n", predicted, m.times.median_ms / predicted);
    } else {
      std::printf("%12s %10s\n", "-", "-");
    }
  };
  line("1 replica", one, p.one);
  const std::string name = std::to_string(n) + " replicas" + (s.mpi ? " (processes)" : " (threads)");
  line(name.c_str(), many, p.core_bound);
  if (p.unavailable.empty()) {
    std::printf(
        "predicted (%s, profile measured on cpu:0): %d replicas with a core each %.2f ms, in series %.2f ms, "
        "bound by the %d cores %.2f ms (the headline)\n",
        p.cluster.c_str(), n, p.replicated, p.in_series, s.cores, p.core_bound);
  } else {
    std::printf("predicted: not available (%s)\n", p.unavailable.c_str());
  }
  const double hidden = median(many.hidden), allreduce = median(many.allreduce_ms);
  std::printf("scaling efficiency: %.0f%% (samples/s of %d replicas / (%d x samples/s of 1))\n", 100 * efficiency, n,
              n);
  std::printf("communication: %zu bucket%s (", many.bucket_bytes.size(), many.bucket_bytes.size() == 1 ? "" : "s");
  for (size_t b = 0; b < many.bucket_bytes.size(); ++b) {
    std::printf("%s%s", b > 0 ? ", " : "", human_bytes(static_cast<double>(many.bucket_bytes[b])).c_str());
  }
  std::printf("); all-reduce %.2f ms per step, %.0f%% of it during backward (medians over %d steps, replica 0)\n",
              allreduce, 100 * hidden, s.f.steps);
  std::printf(
      "host: %d hardware threads (%s). %d replicas share them with each other, their communication threads "
      "and any other process; under `baton train` the loader's workers compete too (this benchmark feeds "
      "one batch from memory)\n",
      s.cores, query_system_info().cpu.model.c_str(), n);
  if (s.mpi) {
    const std::string others = n == 2 ? "rank 1" : "ranks 1.." + std::to_string(n - 1);
    std::printf(
        "1 replica: measured by rank 0 in its own process before the job's replicas started, while %s waited "
        "without polling (MPI_Ibarrier tested every millisecond)\n",
        others.c_str());
  }

  nlohmann::json json = bench_report(Device::cpu(), {.warmup = s.f.warmup, .repeats = s.f.steps});
  json.erase("results");
  json["benchmark"] = "dp";
  json["model"] = s.f.model;
  json["image_size"] = s.options.image_size;
  json["batch"] = batch;
  json["dtype"] = "f32";
  json["optimizer"] = s.config.optimizer;
  json["lr"] = kLr;
  json["replicas"] = n;
  json["mode"] = s.mpi ? "processes" : "threads";
  json["host"] = {{"hardware_threads", s.cores}, {"cpu", query_system_info().cpu.model}};
  json["one_replica"] = measured_json(one, batch);
  json["replicated"] = measured_json(many, batch);
  json["scaling_efficiency"] = efficiency;
  json["communication"] = {{"buckets", many.bucket_bytes.size()},
                           {"bucket_bytes", many.bucket_bytes},
                           {"allreduce_ms", allreduce},
                           {"hidden_fraction", hidden},
                           {"hidden_fraction_per_step", many.hidden},
                           {"allreduce_ms_per_step", many.allreduce_ms}};
  if (p.unavailable.empty()) {
    json["predicted"] = {{"available", true},
                         {"cluster", p.cluster},
                         {"one_replica_step_ms", p.one},
                         {"one_replica_measured_over_predicted", one.times.median_ms / p.one},
                         {"replicated_step_ms", p.replicated},
                         {"in_series_step_ms", p.in_series},
                         {"core_bound_step_ms", p.core_bound},
                         {"headline", "core_bound"},
                         {"measured_over_predicted", many.times.median_ms / p.core_bound},
                         {"error_percent", 100 * (p.core_bound - many.times.median_ms) / many.times.median_ms}};
  } else {
    json["predicted"] = {{"available", false}, {"reason", p.unavailable}};
  }
  write_bench_json(s.f.json_path, json);
}

void run_bench(const Flags& f) {
  const comm::LaunchEnvironment launch = comm::launch_environment();
  Setup s;
  s.f = f;
  s.mpi = launch.size > 1;
  s.replicas = f.replicas > 0 ? f.replicas : s.mpi ? launch.size : 2;
  s.cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  BATON_CHECK(f.replicas == -1 || (f.replicas >= 1 && f.replicas <= 64), "--replicas ", f.replicas,
              ": expected 1 to 64");
  BATON_CHECK(f.steps >= 1 && f.warmup >= 0, "--steps must be >= 1 and --warmup >= 0 (got ", f.steps, " and ", f.warmup,
              ")");
  BATON_CHECK(f.batch >= 1 && f.batch % s.replicas == 0, "--batch-size ", f.batch,
              " is the global batch and must split evenly over the ", s.replicas, " replicas");
  BATON_CHECK(!s.mpi || s.replicas == launch.size, "--replicas ", s.replicas, " with ", launch.size, " processes from ",
              launch.launcher, ": under a launcher there is one replica per process");
  s.options = models::default_options(f.model);
  s.options.batch_size = f.batch;
  s.graph = models::build_model(f.model, s.options);
  s.config.model = f.model;
  s.config.batch_size = f.batch;
  s.config.device = "cpu";
  s.config.optimizer = {{"type", "sgd"}, {"momentum", 0.9}};
  if (s.mpi && launch.rank != 0) quiet_stdout();  // rank 0 prints and writes the JSON
  const std::string where = s.mpi ? "one per process (mpi backend)"
                                  : "threads of this process on cpu:0..cpu:" + std::to_string(s.replicas - 1);
  std::printf(
      "data parallel: %s %lldx%lld, global batch %d, f32, SGD (momentum 0.9); %d replicas, %s; timed: the "
      "median of %d steps after %d warm-up\n",
      f.model.c_str(), static_cast<long long>(s.options.image_size), static_cast<long long>(s.options.image_size),
      f.batch, s.replicas, where.c_str(), f.steps, f.warmup);
  std::fflush(stdout);
  if (!s.mpi) {
    const Predicted p = predict(s);
    const Measured one = measure_in_process(s, 1);
    report(s, one, s.replicas == 1 ? one : measure_in_process(s, s.replicas), p);
    return;
  }
  comm::MpiRuntime runtime;
  try {
    Predicted p;
    std::optional<Measured> one;
    if (launch.rank == 0) {
      p = predict(s);
      one = measure_in_process(s, 1);
    }
    runtime.idle_barrier(std::chrono::hours(1));  // the others wait, leaving the cores to rank 0
    ParallelConfig parallel;
    parallel.data_parallel = s.replicas;
    const std::unique_ptr<DataParallelEngine> engine = make_data_parallel_engine(s.graph, s.config, parallel, runtime);
    const Measured many = measure(*engine, s, f.batch / s.replicas);
    if (launch.rank == 0) report(s, *one, many, p);
  } catch (const std::exception& e) {
    runtime.abort(std::string("error: ") + e.what());
  }
}

}  // namespace

void add_bench_dp_command(CLI::App& bench) {
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = bench.add_subcommand(
      "dp", "Data-parallel training step: 1 vs N replicas, scaling efficiency, hidden all-reduce, predicted step");
  cmd->add_option("--model", f->model, "Reference model (default resnet20, synthetic data at its input shape)");
  cmd->add_option("--batch-size", f->batch, "Global batch, split over the replicas (default 64)");
  cmd->add_option("--steps", f->steps, "Timed steps, the median kept (default 10)");
  cmd->add_option("--warmup", f->warmup, "Untimed steps first (default 2)");
  cmd->add_option("--replicas", f->replicas,
                  "Replicas N (default 2 threads; under mpirun one per process, the job's size)");
  cmd->add_option("--json", f->json_path, "Also write every figure as JSON to this file (atomically; rank 0)");
  cmd->callback([f] { run_bench(*f); });
}

}  // namespace baton::cli
