// `baton bench hybrid`: a model's training step (synthetic batch) through G x S hybrid layouts under
// both gradient synchronisations — on CPU virtual devices of one process, or under mpirun one
// process per group and stage — : samples/s, all-reduce messages and bytes per step, the share of
// all-reduce time during which the group computed, and the simulator's predicted step beside each
// measurement. Prints a table, writes JSON. See docs/hybrid.md.
#include "tools/bench_hybrid.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "models/model_registry.h"
#include "parallel/comm/launch_environment.h"
#include "parallel/comm/mpi_runtime.h"
#include "parallel/parallel_training.h"
#include "parallel/pipeline/hybrid_executor.h"
#include "parallel/plan/cluster_for_devices.h"
#include "parallel/plan/planner.h"
#include "parallel/plan/profiler.h"
#include "runtime/core/error.h"
#include "tools/commands.h"
#include "tools/rank_output.h"

namespace baton::cli {
namespace {

using namespace baton::parallel;           // NOLINT
using namespace baton::cli::hybrid_bench;  // NOLINT

// The groups on this process's CPU virtual devices, or (`world` set) this process's stage of them.
std::unique_ptr<HybridExecutor> make_hybrid(const Flags& f, const Graph& graph, const EvaluatedPlan& planned,
                                            Layout layout, GradSyncStrategy sync, comm::Communicator* world) {
  HybridOptions options;
  options.pipeline.optimizer = {{"type", "sgd"}, {"momentum", 0.9}};
  options.pipeline.model = f.model;
  options.grad_sync = sync;
  if (world != nullptr) {
    return std::make_unique<HybridExecutor>(graph, planned.plan, planned.schedule, *world, Device::cpu(), options);
  }
  std::vector<Device> available;
  for (int d = 0; d < layout.groups * layout.stages * planned.plan.chunks_per_device; ++d)
    available.push_back(Device::cpu(d));
  return std::make_unique<HybridExecutor>(graph, planned.plan, planned.schedule,
                                          hybrid_devices(planned.plan, available), options);
}

// Across processes: the all-reduces of group 0's processes, each process's own, hidden behind any
// of group 0's processes computing (the processes' timelines lined up on the machine's steady clock,
// which they share), summed on every process.
void add_process_steps(comm::Communicator& world, int stages, const std::vector<TraceEvent>& events, double origin_us,
                       bool in_group0, Row& row, double& hidden_us, double& total_us) {
  const Stream host = Stream::create(Device::cpu());
  const int ranks = world.size();
  // Every process's compute intervals, padded to the longest list.
  const Spans mine = compute_spans(events, origin_us);
  Tensor count = Tensor::empty_host({1}, DType::i64);
  Tensor counts = Tensor::empty_host({ranks}, DType::i64);
  count.data<int64_t>()[0] = static_cast<int64_t>(mine.size());
  world.all_gather(count, counts, host)->wait();
  const int64_t longest = *std::max_element(counts.data<int64_t>(), counts.data<int64_t>() + ranks);
  Tensor spans = Tensor::empty_host({2 * std::max<int64_t>(longest, 1)}, DType::f64);
  Tensor all = Tensor::empty_host({ranks * spans.numel()}, DType::f64);
  std::fill(spans.data<double>(), spans.data<double>() + spans.numel(), 0.0);
  for (size_t i = 0; i < mine.size(); ++i) {
    spans.data<double>()[2 * i] = mine[i].first;
    spans.data<double>()[2 * i + 1] = mine[i].second;
  }
  world.all_gather(spans, all, host)->wait();
  Spans group0;  // world ranks 0 .. S-1
  for (int r = 0; r < stages; ++r) {
    const double* v = all.data<double>() + r * spans.numel();
    for (int64_t i = 0; i < counts.data<int64_t>()[r]; ++i) group0.emplace_back(v[2 * i], v[2 * i + 1]);
  }
  if (in_group0) add_allreduces(events, origin_us, std::move(group0), row, hidden_us, total_us);
  Tensor sums = Tensor::empty_host({5}, DType::f64);
  double* v = sums.data<double>();
  v[0] = row.messages;
  v[1] = row.bytes;
  v[2] = row.allreduce_ms;
  v[3] = hidden_us;
  v[4] = total_us;
  world.all_reduce(sums, comm::ReduceOp::sum, host)->wait();
  row.messages = v[0];
  row.bytes = v[1];
  row.allreduce_ms = v[2];
  hidden_us = v[3];
  total_us = v[4];
}

Row measure_hybrid(const Flags& f, const Graph& graph, const EvaluatedPlan& planned, Layout layout,
                   GradSyncStrategy sync, comm::Communicator* world) {
  const std::unique_ptr<HybridExecutor> hybrid = make_hybrid(f, graph, planned, layout, sync, world);
  hybrid->initialize(1);
  PipelineExecutor& traced = hybrid->group(std::max(0, hybrid->local_group()));  // group 0, or this process's
  const std::vector<Tensor> inputs = random_graph_inputs(graph, f.batch, Device::cpu(), Device::cpu());
  Row row;
  row.layout = layout;
  row.strategy = layout.groups > 1 ? std::string(grad_sync_name(sync)) : "none";
  uint64_t seed = 0;
  double hidden_us = 0, total_us = 0;
  std::vector<TraceEvent> events;  // across processes: every timed step's, then lined up with the others'
  row.times = time_wall(f.warmup, f.steps, [&] {
    const bool timed = ++seed > static_cast<uint64_t>(f.warmup);
    hybrid->step(inputs, {.seed = seed, .lr = kLr, .record_trace = timed});
    if (!timed) return;
    std::vector<TraceEvent> step = traced.take_trace();
    if (world == nullptr) {
      add_allreduces(step, 0, compute_spans(step), row, hidden_us, total_us);  // the group's positions
    } else {
      events.insert(events.end(), step.begin(), step.end());
    }
  });
  if (world != nullptr) {
    const double origin_us =
        std::chrono::duration<double, std::micro>(traced.trace_origin().time_since_epoch()).count();
    add_process_steps(*world, layout.stages, events, origin_us, hybrid->local_group() == 0, row, hidden_us, total_us);
  }
  row.messages /= f.steps;
  row.bytes /= f.steps;
  row.allreduce_ms /= f.steps;
  row.hidden = total_us > 0 ? hidden_us / total_us : 1.0;
  return row;
}

// Under mpirun: the layouts asked for must each use every process; by default every G x S = P.
std::vector<Layout> process_layouts(const Flags& f, bool given, int processes) {
  if (!given) {
    std::vector<Layout> out;
    for (int s = processes; s >= 1; --s) {
      if (processes % s == 0) out.push_back({processes / s, s});
    }
    return out;
  }
  std::vector<Layout> out = parse_layouts(f.layouts);
  for (const Layout& l : out) {
    BATON_CHECK(l.groups * l.stages == processes, "--layouts ", l.name(), " with ", processes,
                " processes: across processes every layout runs one process per group and stage (G x S = ", processes,
                ")");
  }
  return out;
}

void run_hybrid_bench(const Flags& f, bool layouts_given) {
  const comm::LaunchEnvironment launch = comm::launch_environment();
  const bool processes = launch.size > 1;
  const std::vector<Layout> layouts =
      processes ? process_layouts(f, layouts_given, launch.size) : parse_layouts(f.layouts);
  const ScheduleKind kind = parse_schedule_kind(f.schedule);
  BATON_CHECK(f.steps >= 1 && f.warmup >= 0, "--steps must be >= 1 and --warmup >= 0 (got ", f.steps, " and ", f.warmup,
              ")");
  BATON_CHECK(f.micro_batches >= 1, "--micro-batches must be at least 1 (got ", f.micro_batches, ")");
  BATON_CHECK(!processes || kind != ScheduleKind::interleaved,
              "--schedule interleaved across processes is not available yet (one stage per process)");
  std::set<int> micro_sizes;
  for (const Layout& l : layouts) {
    BATON_CHECK(f.batch % (l.groups * f.micro_batches) == 0, "--batch-size ", f.batch, " does not split into ",
                l.groups, " groups of ", f.micro_batches, " micro-batches (layout ", l.name(), ")");
    micro_sizes.insert(f.batch / (l.groups * f.micro_batches));
  }
  if (processes && launch.rank != 0) quiet_stdout();  // rank 0 prints and writes the JSON
  std::unique_ptr<comm::MpiRuntime> runtime = processes ? std::make_unique<comm::MpiRuntime>() : nullptr;
  const std::unique_ptr<comm::Communicator> world = runtime ? runtime->world() : nullptr;
  try {
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    models::ModelOptions options = models::default_options(f.model);
    options.batch_size = f.batch;
    const Graph graph = models::build_model(f.model, options);
    std::printf(
        "hybrid: %s, global batch %d, f32, SGD (momentum 0.9), %s, %d micro-batches per group, %s; timed: the "
        "median of %d steps after %d warm-up\n",
        f.model.c_str(), f.batch, f.schedule.c_str(), f.micro_batches,
        processes ? ("one MPI process per group and stage (" + std::to_string(launch.size) + ")").c_str()
                  : "CPU virtual devices of this process",
        f.steps, f.warmup);
    std::printf(
        "profiling %s on cpu:0 (1 warm-up, median of 3) for the simulator, as each layout's stage "
        "workers compute\n",
        f.model.c_str());
    std::fflush(stdout);
    // One profile per way the layouts share the cores (a stage worker's threads and the workers
    // beside it, CpuStageShare). Across processes rank 0 alone measures (the others would compete
    // for its cores) and shares it.
    std::map<std::pair<int, int>, Profile> profiles;
    const auto profile_for = [&](const CpuStageShare& share) -> const Profile& {
      ProfilerOptions profiler;
      profiler.batch_sizes.assign(micro_sizes.begin(), micro_sizes.end());
      profiler.warmup = 1;
      profiler.repeats = 3;
      profiler.allow_tf32 = false;
      share.apply(profiler, processes);
      const auto [it, added] = profiles.try_emplace({profiler.cpu_threads, profiler.busy_neighbours});
      if (!added) return it->second;
      if (!world || launch.rank == 0) it->second = measure_profile(graph, f.model, Device::cpu(), profiler);
      if (world) it->second = share_profile(*world, it->second);
      return it->second;
    };
    std::vector<Row> rows;
    for (const Layout& l : layouts) {
      const int chunks = kind == ScheduleKind::interleaved ? 2 : 1;
      std::vector<Device> devices;
      for (int d = 0; d < l.groups * l.stages; ++d) devices.push_back(Device::cpu(d));
      Cluster cluster = cluster_for_devices(devices, l.groups * l.stages);
      const CpuStageShare share = cpu_stage_share(l.groups, l.stages, processes);
      cluster.set_concurrent_compute(share.concurrent_compute());
      const Profile& profile = profile_for(share);
      PlanSettings settings;
      settings.batch = f.batch;
      Profile used = profile;
      EvaluatedPlan planned = evaluate_plan({.groups = l.groups,
                                             .stages = l.stages,
                                             .chunks = chunks,
                                             .micro_batches = f.micro_batches,
                                             .schedule = kind},
                                            used, cluster, settings);
      if (world) share_plan(*world, used, planned);  // every process runs rank 0's plan
      // The whole step's work on one device, spread over the cores at best.
      const double serial =
          evaluate_plan({.stages = 1, .micro_batches = l.groups * f.micro_batches}, used, cluster, settings)
              .predicted.step_ms;
      const std::vector<GradSyncStrategy> syncs =
          l.groups > 1 ? std::vector{GradSyncStrategy::bucket, GradSyncStrategy::partition}
                       : std::vector{GradSyncStrategy::bucket};
      for (GradSyncStrategy sync : syncs) {
        std::printf("running %s %s...\n", l.name().c_str(), l.groups > 1 ? grad_sync_name(sync).data() : "");
        std::fflush(stdout);
        Row row = measure_hybrid(f, graph, planned, l, sync, world.get());
        row.predicted_ms = planned.predicted.step_ms;
        row.core_bound_ms = std::max(row.predicted_ms, serial / std::min(l.groups * l.stages, cores));
        rows.push_back(std::move(row));
      }
    }
    if (!processes || launch.rank == 0) report(f, rows, cores, processes ? launch.size : 0);
  } catch (const std::exception& e) {
    if (!runtime) throw;
    runtime->abort(std::string("error: ") + e.what());
  }
}

}  // namespace

void add_bench_hybrid_command(CLI::App& bench) {
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = bench.add_subcommand(
      "hybrid", "Hybrid G x S layouts: samples/s, all-reduce messages and bytes (bucket vs partition), predicted step");
  cmd->add_option("--model", f->model, "Reference model (default resnet20, synthetic data at its input shape)");
  cmd->add_option("--batch-size", f->batch, "Global batch, split over the groups (default 64)");
  CLI::Option* layouts = cmd->add_option(
      "--layouts", f->layouts,
      "Comma-separated GxS layouts (default 1x2,2x1,2x2; under mpirun -np P every G x S = P, one process each)");
  cmd->add_option("--micro-batches", f->micro_batches, "Micro-batches per group and step (default 2)");
  cmd->add_option("--schedule", f->schedule, "gpipe, 1f1b or interleaved (default 1f1b)");
  cmd->add_option("--steps", f->steps, "Timed steps, the median kept (default 5)");
  cmd->add_option("--warmup", f->warmup, "Untimed steps first (default 1)");
  cmd->add_option("--json", f->json_path, "Also write every figure as JSON to this file (atomically)");
  cmd->callback([f, layouts] { run_hybrid_bench(*f, layouts->count() > 0); });
}

}  // namespace baton::cli
