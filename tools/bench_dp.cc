// `baton bench dp`: a model's training step (synthetic batch, CPU) through the data-parallel engine with
// 1 replica and with N (threads of this process, or one per process under mpirun): samples/s, scaling
// efficiency, the share of all-reduce hidden behind backward, the buckets, and the simulator's
// predicted step beside the measured one. Prints a table, writes JSON. See docs/data-parallel.md.
#include "tools/bench_dp.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "models/model_registry.h"
#include "parallel/comm/launch_environment.h"
#include "parallel/parallel_training.h"
#include "parallel/plan/cluster_for_devices.h"
#include "parallel/plan/planner.h"
#include "parallel/plan/profiler.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "runtime/train/graph_contract.h"
#include "tools/bench_timer.h"
#include "tools/commands.h"
#include "tools/rank_output.h"

namespace baton::cli {
namespace {

using namespace baton::parallel;  // NOLINT

data::Batch synthetic_batch(const Graph& graph, int rows) {
  data::Batch batch;
  const std::vector<Tensor> inputs = random_graph_inputs(graph, rows, Device::cpu(), Device::cpu());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string& name = graph.value(graph.inputs()[k]).name;
    if (name == kLabelInput) {
      batch.targets = inputs[k];
    } else {
      batch.inputs.push_back({name, inputs[k]});
    }
  }
  return batch;
}

DpMeasured measure_dp(DataParallelEngine& engine, const DpBenchSetup& s, int rows) {
  const data::Batch batch = synthetic_batch(s.graph, rows);
  engine.initialize(1);
  DpMeasured m;
  m.replicas = engine.replicas();
  uint64_t seed = 0;
  m.times = time_wall(s.f.warmup, s.f.steps, [&] {
    engine.step(batch, ++seed, kDpBenchLr);
    if (seed <= static_cast<uint64_t>(s.f.warmup)) return;
    const ReplicaStepRecord& last = engine.last_step(0);
    m.hidden.push_back(hidden_communication_fraction(last));
    if (engine.replicas() > 1 && engine.local_replicas() == engine.replicas()) {
      std::vector<ReplicaStepRecord> all;
      for (int r = 0; r < engine.local_replicas(); ++r) all.push_back(engine.last_step(r));
      m.hidden_transfer.push_back(hidden_transfer_fraction(all));
    }
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

DpMeasured measure_in_process(const DpBenchSetup& s, int replicas) {
  ParallelConfig parallel;
  parallel.data_parallel = replicas;
  const std::unique_ptr<DataParallelEngine> engine = make_data_parallel_engine(s.graph, s.config, parallel);
  return measure_dp(*engine, s, s.f.batch);
}

DpPredicted predict(const DpBenchSetup& s) {
  DpPredicted p;
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

void run_dp_bench(const DpBenchFlags& f) {
  const comm::LaunchEnvironment launch = comm::launch_environment();
  DpBenchSetup s;
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
    const DpPredicted p = predict(s);
    const DpMeasured one = measure_in_process(s, 1);
    report_dp_bench(s, one, s.replicas == 1 ? one : measure_in_process(s, s.replicas), p);
    return;
  }
  comm::MpiRuntime runtime;
  try {
    DpPredicted p;
    std::optional<DpMeasured> one;
    if (launch.rank == 0) {
      p = predict(s);
      one = measure_in_process(s, 1);
    }
    runtime.idle_barrier(std::chrono::hours(1));  // the others wait, leaving the cores to rank 0
    ParallelConfig parallel;
    parallel.data_parallel = s.replicas;
    const std::unique_ptr<DataParallelEngine> engine = make_data_parallel_engine(s.graph, s.config, parallel, runtime);
    const DpMeasured many = measure_dp(*engine, s, f.batch / s.replicas);
    if (launch.rank == 0) report_dp_bench(s, *one, many, p);
  } catch (const std::exception& e) {
    runtime.abort(std::string("error: ") + e.what());
  }
}

}  // namespace

void add_bench_dp_command(CLI::App& bench) {
  auto f = std::make_shared<DpBenchFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "dp", "Data-parallel training step: 1 vs N replicas, scaling efficiency, hidden all-reduce, predicted step");
  cmd->add_option("--model", f->model, "Reference model (default resnet20, synthetic data at its input shape)");
  cmd->add_option("--batch-size", f->batch, "Global batch, split over the replicas (default 64)");
  cmd->add_option("--steps", f->steps, "Timed steps, the median kept (default 10)");
  cmd->add_option("--warmup", f->warmup, "Untimed steps first (default 2)");
  cmd->add_option("--replicas", f->replicas,
                  "Replicas N (default 2 threads; under mpirun one per process, the job's size)");
  cmd->add_option("--json", f->json_path, "Also write every figure as JSON to this file (atomically; rank 0)");
  cmd->callback([f] { run_dp_bench(*f); });
}

}  // namespace baton::cli
