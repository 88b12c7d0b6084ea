// `baton bench hybrid`: a model's training step (synthetic batch, CPU virtual devices, one process)
// through G x S hybrid layouts under both gradient synchronisations: samples/s, all-reduce messages
// and bytes per step, the share of all-reduce time during which the group computed, and the
// simulator's predicted step beside each measurement. Prints a table, writes JSON. See docs/hybrid.md.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "models/model_registry.h"
#include "parallel/cluster_for_devices.h"
#include "parallel/parallel_training.h"
#include "parallel/pipeline/hybrid_executor.h"
#include "parallel/planner.h"
#include "parallel/profiler.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "tools/bench_timer.h"
#include "tools/commands.h"

namespace baton::cli {
namespace {

using namespace baton::parallel;  // NOLINT

constexpr double kLr = 1e-4;  // small: the weights barely move over the timed steps

struct Flags {
  std::string model = "resnet20";
  int batch = 64;
  int steps = 5;
  int warmup = 1;
  std::string layouts = "1x2,2x1,2x2";
  int micro_batches = 2;  // per group
  std::string schedule = "1f1b";
  std::string json_path;
};

struct Layout {
  int groups = 1, stages = 1;
  std::string name() const { return std::to_string(groups) + "x" + std::to_string(stages); }
};

std::vector<Layout> parse_layouts(const std::string& text) {
  std::vector<Layout> out;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    Layout l;
    char x = 0;
    std::stringstream in(item);
    BATON_CHECK((in >> l.groups >> x >> l.stages) && x == 'x' && in.peek() == EOF && l.groups >= 1 && l.stages >= 1,
                "--layouts '", text, "': '", item, "' is not GxS with G, S >= 1 (e.g. 2x2)");
    out.push_back(l);
  }
  BATON_CHECK(!out.empty(), "--layouts: no layout given (e.g. 1x2,2x2)");
  return out;
}

// One timed configuration: a layout under one strategy.
struct Row {
  Layout layout;
  std::string strategy;  // "none" for one group
  WallTimes times;
  double messages = 0, bytes = 0, allreduce_ms = 0, hidden = 1;  // per step, group 0, means over the timed steps
  double predicted_ms = 0, core_bound_ms = 0;
  std::string unpredicted;  // why there is no prediction
};

// The intervals' union, merged and sorted.
std::vector<std::pair<double, double>> merged(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<double, double>> out;
  for (const auto& s : spans) {
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

// Adds one traced step of group 0 to `row`'s sums: its all-reduces, and how much of their time some
// pipeline position of the group was computing (forward or backward).
void add_step(const std::vector<TraceEvent>& events, Row& row, double& hidden_us, double& total_us) {
  std::vector<std::pair<double, double>> compute;
  for (const TraceEvent& e : events) {
    if (e.category == "forward" || e.category == "backward")
      compute.emplace_back(e.start_us, e.start_us + e.duration_us);
  }
  compute = merged(std::move(compute));
  for (const TraceEvent& e : events) {
    if (e.category != "allreduce") continue;
    row.messages += 1;
    row.bytes += e.args.value("bytes", 0.0);
    row.allreduce_ms += e.duration_us / 1000;
    const double a = e.start_us, b = e.start_us + e.duration_us;
    total_us += b - a;
    for (const auto& [c0, c1] : compute) hidden_us += std::max(0.0, std::min(b, c1) - std::max(a, c0));
  }
}

Row measure(const Flags& f, const Graph& graph, const EvaluatedPlan& planned, Layout layout, GradSyncStrategy sync) {
  std::vector<Device> available;
  for (int d = 0; d < layout.groups * layout.stages * planned.plan.chunks_per_device; ++d)
    available.push_back(Device::cpu(d));
  HybridOptions options;
  options.pipeline.optimizer = {{"type", "sgd"}, {"momentum", 0.9}};
  options.pipeline.model = f.model;
  options.grad_sync = sync;
  HybridExecutor hybrid(graph, planned.plan, planned.schedule, hybrid_devices(planned.plan, available), options);
  hybrid.initialize(1);
  const std::vector<Tensor> inputs = random_graph_inputs(graph, f.batch, Device::cpu(), Device::cpu());
  Row row;
  row.layout = layout;
  row.strategy = layout.groups > 1 ? std::string(grad_sync_name(sync)) : "none";
  uint64_t seed = 0;
  double hidden_us = 0, total_us = 0;
  row.times = time_wall(f.warmup, f.steps, [&] {
    const bool timed = ++seed > static_cast<uint64_t>(f.warmup);
    hybrid.step(inputs, {.seed = seed, .lr = kLr, .record_trace = timed});
    if (timed) add_step(hybrid.group(0).take_trace(), row, hidden_us, total_us);
  });
  row.messages /= f.steps;
  row.bytes /= f.steps;
  row.allreduce_ms /= f.steps;
  row.hidden = total_us > 0 ? hidden_us / total_us : 1.0;
  return row;
}

void report(const Flags& f, const std::vector<Row>& rows, int cores) {
  std::printf("%-7s %-9s %9s %9s | %8s %10s %10s %7s | %9s %9s %9s\n", "layout", "sync", "step ms", "samples/s",
              "messages", "bytes", "per msg", "hidden", "pred ms", "core-bound", "meas/pred");
  nlohmann::json runs = nlohmann::json::array();
  for (const Row& r : rows) {
    const double samples = f.batch / (r.times.median_ms / 1000);
    const bool predicted = r.unpredicted.empty();
    std::printf("%-7s %-9s %9.2f %9.1f | %8.0f %10s %10s %6.0f%% | %9.2f %9.2f %8.2fx\n", r.layout.name().c_str(),
                r.strategy.c_str(), r.times.median_ms, samples, r.messages, human_bytes(r.bytes).c_str(),
                r.messages > 0 ? human_bytes(r.bytes / r.messages).c_str() : "-", 100 * r.hidden, r.predicted_ms,
                r.core_bound_ms, predicted ? r.times.median_ms / r.core_bound_ms : 0.0);
    nlohmann::json run = {{"groups", r.layout.groups},
                          {"stages", r.layout.stages},
                          {"grad_sync", r.strategy},
                          {"step_ms", r.times.median_ms},
                          {"step_min_ms", r.times.min_ms},
                          {"samples_ms", r.times.samples_ms},
                          {"samples_per_s", samples},
                          {"allreduce_messages_per_step", r.messages},
                          {"allreduce_bytes_per_step", r.bytes},
                          {"allreduce_ms_per_step", r.allreduce_ms},
                          {"hidden_fraction", r.hidden}};
    if (predicted) {
      run["predicted"] = {{"available", true},
                          {"step_ms", r.predicted_ms},
                          {"core_bound_step_ms", r.core_bound_ms},
                          {"measured_over_predicted", r.times.median_ms / r.core_bound_ms}};
    } else {
      run["predicted"] = {{"available", false}, {"reason", r.unpredicted}};
    }
    runs.push_back(std::move(run));
  }
  std::printf(
      "messages and bytes: group 0's all-reduces per step (each group sends the same); hidden: the share of their "
      "time during which some pipeline position of the group was computing. pred ms: the simulator with a core "
      "per device (it does not tell bucket from partition); core-bound: no faster than the whole step's work "
      "over the %d hardware threads, which every layout's devices share with their communication threads\n",
      cores);
  nlohmann::json json = bench_report(Device::cpu(), {.warmup = f.warmup, .repeats = f.steps});
  json.erase("results");
  json["benchmark"] = "hybrid";
  json["model"] = f.model;
  json["batch"] = f.batch;
  json["micro_batches_per_group"] = f.micro_batches;
  json["schedule"] = f.schedule;
  json["dtype"] = "f32";
  json["lr"] = kLr;
  json["host"] = {{"hardware_threads", cores}, {"cpu", query_system_info().cpu.model}};
  json["runs"] = std::move(runs);
  write_bench_json(f.json_path, json);
}

void run_bench(const Flags& f) {
  const std::vector<Layout> layouts = parse_layouts(f.layouts);
  const ScheduleKind kind = parse_schedule_kind(f.schedule);
  BATON_CHECK(f.steps >= 1 && f.warmup >= 0, "--steps must be >= 1 and --warmup >= 0 (got ", f.steps, " and ", f.warmup,
              ")");
  BATON_CHECK(f.micro_batches >= 1, "--micro-batches must be at least 1 (got ", f.micro_batches, ")");
  std::set<int> micro_sizes;
  for (const Layout& l : layouts) {
    BATON_CHECK(f.batch % (l.groups * f.micro_batches) == 0, "--batch-size ", f.batch, " does not split into ",
                l.groups, " groups of ", f.micro_batches, " micro-batches (layout ", l.name(), ")");
    micro_sizes.insert(f.batch / (l.groups * f.micro_batches));
  }
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  models::ModelOptions options = models::default_options(f.model);
  options.batch_size = f.batch;
  const Graph graph = models::build_model(f.model, options);
  std::printf(
      "hybrid: %s, global batch %d, f32, SGD (momentum 0.9), %s, %d micro-batches per group, CPU virtual "
      "devices of this process; timed: the median of %d steps after %d warm-up\n",
      f.model.c_str(), f.batch, f.schedule.c_str(), f.micro_batches, f.steps, f.warmup);
  std::printf("profiling %s on cpu:0 (1 warm-up, median of 3) for the simulator\n", f.model.c_str());
  std::fflush(stdout);
  ProfilerOptions profiler;
  profiler.batch_sizes.assign(micro_sizes.begin(), micro_sizes.end());
  profiler.warmup = 1;
  profiler.repeats = 3;
  profiler.allow_tf32 = false;
  const Profile profile = measure_profile(graph, f.model, Device::cpu(), profiler);
  std::vector<Row> rows;
  for (const Layout& l : layouts) {
    const int chunks = kind == ScheduleKind::interleaved ? 2 : 1;
    std::vector<Device> devices;
    for (int d = 0; d < l.groups * l.stages; ++d) devices.push_back(Device::cpu(d));
    const Cluster cluster = cluster_for_devices(devices, l.groups * l.stages);
    PlanSettings settings;
    settings.batch = f.batch;
    const EvaluatedPlan planned = evaluate_plan(
        {.groups = l.groups, .stages = l.stages, .chunks = chunks, .micro_batches = f.micro_batches, .schedule = kind},
        profile, cluster, settings);
    // The whole step's work on one device, spread over the cores at best.
    const double serial =
        evaluate_plan({.stages = 1, .micro_batches = l.groups * f.micro_batches}, profile, cluster, settings)
            .predicted.step_ms;
    const std::vector<GradSyncStrategy> syncs = l.groups > 1
                                                    ? std::vector{GradSyncStrategy::bucket, GradSyncStrategy::partition}
                                                    : std::vector{GradSyncStrategy::bucket};
    for (GradSyncStrategy sync : syncs) {
      std::printf("running %s %s...\n", l.name().c_str(), l.groups > 1 ? grad_sync_name(sync).data() : "");
      std::fflush(stdout);
      Row row = measure(f, graph, planned, l, sync);
      row.predicted_ms = planned.predicted.step_ms;
      row.core_bound_ms = std::max(row.predicted_ms, serial / std::min(l.groups * l.stages, cores));
      rows.push_back(std::move(row));
    }
  }
  report(f, rows, cores);
}

}  // namespace

void add_bench_hybrid_command(CLI::App& bench) {
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = bench.add_subcommand(
      "hybrid", "Hybrid G x S layouts: samples/s, all-reduce messages and bytes (bucket vs partition), predicted step");
  cmd->add_option("--model", f->model, "Reference model (default resnet20, synthetic data at its input shape)");
  cmd->add_option("--batch-size", f->batch, "Global batch, split over the groups (default 64)");
  cmd->add_option("--layouts", f->layouts, "Comma-separated GxS layouts (default 1x2,2x1,2x2)");
  cmd->add_option("--micro-batches", f->micro_batches, "Micro-batches per group and step (default 2)");
  cmd->add_option("--schedule", f->schedule, "gpipe, 1f1b or interleaved (default 1f1b)");
  cmd->add_option("--steps", f->steps, "Timed steps, the median kept (default 5)");
  cmd->add_option("--warmup", f->warmup, "Untimed steps first (default 1)");
  cmd->add_option("--json", f->json_path, "Also write every figure as JSON to this file (atomically)");
  cmd->callback([f] { run_bench(*f); });
}

}  // namespace baton::cli
