// `baton plan`: split a model over a cluster — partition into stages, schedule micro-batches,
// simulate one training step — and print the stage table and predictions, or (--search) a ranked
// comparison of every layout, partitioner, schedule and micro-batch count.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "parallel/parallel_choices.h"
#include "parallel/parallel_training.h"
#include "parallel/pipeline/stage_sync.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/plan_file.h"
#include "parallel/plan/planner.h"
#include "parallel/plan/trace.h"
#include "runtime/core/atomic_file.h"
#include "runtime/core/error.h"
#include "tools/commands.h"
#include "tools/flag_checks.h"
#include "tools/model_flags.h"
#include "tools/plan_objective_flags.h"
#include "tools/plan_pipedream.h"

namespace baton::cli {
namespace {

using namespace baton::parallel;

struct PlanFlags {
  ModelFlags model;
  std::string spec_path;
  int batch = 128;
  int micro_batches = 0;  // 0: the default below
  int gpus = 0;
  int stages = 0;
  int groups = 1;
  int chunks = 2;
  std::string partitioner = "block";
  std::string schedule = "1f1b";
  std::string profile_path;
  std::string device_spec;
  std::string cluster = "h200-nvlink-8";
  double memory_cap_gb = 0;
  double bucket_mb = 25;
  bool search = false;
  bool json = false;
  std::string json_path;  // --json FILE: the plan file written there (empty: printed)
  std::string grad_sync = "bucket";
  std::string trace_path;
  std::string objective = "baton";
  std::string replication;  // equal or free; empty: equal for one plan, both kinds with --search
  double bandwidth_gbs = 1;
  double activation_compression_ratio = 0;  // 0: activation transfers not costed (PipeDream's default)
  bool straight_pipeline = false;
  std::set<std::string> given;  // the long names of the flags on the command line
};

void print_summary(const EvaluatedPlan& e, double single_ms) {
  std::printf(
      "predicted step %.3f ms, %.1f samples/s, bubble %.1f%%, peak memory %.2f GB, speedup %.2fx over one device (%.3f "
      "ms)\n",
      e.predicted.step_ms, e.predicted.throughput, 100 * e.predicted.bubble_fraction,
      static_cast<double>(e.peak_memory_bytes) / 1e9, single_ms / e.predicted.step_ms, single_ms);
  std::printf("balance %.3f (slowest stage / mean), %.1f MB of activations cross stages per step\n", e.balance,
              e.communication_bytes / 1e6);
}

// The profile to plan with, and whether its times rest on measurements (a measured profile, or an analytic
// one from device figures measured on this machine) or on datasheet peaks no measurement calibrated.
struct PlanProfile {
  Profile profile;
  bool calibrated = true;
};

// --profile (baton's JSON or pipedream:FILE) or the analytic profile of --model.
PlanProfile plan_profile(const PlanFlags& f, const Cluster& cluster) {
  BATON_CHECK(f.profile_path.empty() || f.device_spec.empty(), "give --profile or --device-spec, not both");
  if (!f.profile_path.empty()) {
    BATON_CHECK(f.model.model.empty() && f.spec_path.empty(),
                "--profile already names the model; drop --model/--model-spec");
    Profile profile = load_plan_profile(f.profile_path, f.batch);
    const bool calibrated = profile.source != "analytic";
    return {std::move(profile), calibrated};
  }
  const Graph graph = load_model_graph(f.model, f.spec_path, true);
  const DeviceSpec device = f.device_spec.empty() ? cluster.device(0) : load_device_spec(f.device_spec);
  AnalyticOptions o;
  o.batch_sizes.clear();
  for (int b = 1; b <= f.batch; b *= 2) o.batch_sizes.push_back(b);
  if (o.batch_sizes.back() != f.batch) o.batch_sizes.push_back(f.batch);
  return {analytic_profile(graph, f.model.model.empty() ? f.spec_path : f.model.model, device, o), device.measured};
}

// --objective pipedream: PipeDream's optimiser on PipeDream's own profile, or on baton's at --batch.
void run_pipedream_plan(const PlanFlags& f) {
  BATON_CHECK(f.json_path.empty(),
              "--objective pipedream does not take --json FILE: its optimum is no plan file (--json prints it)");
  PipeDreamRequest request;
  request.graph = is_pipedream_profile(f.profile_path)
                      ? load_plan_pipedream_graph(f.profile_path)
                      : parallel::pipedream_graph_of(plan_profile(f, load_cluster(f.cluster)).profile, f.batch);
  request.workers = f.gpus;
  request.bandwidth_gbs = f.bandwidth_gbs;
  if (f.activation_compression_ratio > 0) request.activation_compression_ratio = f.activation_compression_ratio;
  if (f.memory_cap_gb > 0) request.memory_limit_gb = f.memory_cap_gb;
  request.straight_pipeline = f.straight_pipeline;
  request.json = f.json;
  run_pipedream_objective(request);
}

void run_plan(const PlanFlags& f) {
  BATON_CHECK(f.objective == "baton" || f.objective == "pipedream", "--objective: expected baton or pipedream, got '",
              f.objective, "'");
  check_plan_objective_flags(f.objective, f.given, f.profile_path, f.schedule);
  if (f.objective == "pipedream") return run_pipedream_plan(f);
  // The choices, each parsed once as `baton train` parses them: an unknown name is one error naming the flag.
  const PartitionerKind partitioner = parse_choice("--partitioner", f.partitioner, parse_partitioner);
  const ScheduleKind schedule = parse_choice("--schedule", f.schedule, parse_schedule_kind);
  const GradSyncStrategy grad_sync = parse_choice("--grad-sync", f.grad_sync, parse_grad_sync);
  std::optional<Replication> replication;  // none: equal for one plan, both kinds with --search
  if (!f.replication.empty()) replication = parse_choice("--replication", f.replication, parse_replication);
  BATON_CHECK(!(f.gpus > 0 && f.stages > 0), "give --gpus N or --stages S [--groups G], not both");
  BATON_CHECK(f.batch >= 1, "--batch must be >= 1");
  BATON_CHECK(f.groups <= f.batch, "--groups ", f.groups, ": every group takes a share of the batch, and --batch ",
              f.batch, " has fewer samples than that (give at most ", f.batch, " groups, or a larger --batch)");
  if (!f.json_path.empty()) check_file_writable(f.json_path, "plan file");
  const bool printed_json = f.json && f.json_path.empty();  // else the tables (and --json FILE written)
  const Cluster cluster = load_cluster(f.cluster);
  const PlanProfile planned = plan_profile(f, cluster);
  const Profile& profile = planned.profile;
  // Shipped GPU descriptions are datasheet peaks times assumed efficiencies: say so beside the predictions.
  const std::string basis = planned.calibrated ? "" : " (uncalibrated: datasheet peaks times assumed efficiencies)";
  PlanSettings settings;
  settings.batch = f.batch;
  settings.memory_cap_bytes = f.memory_cap_gb * 1e9;
  settings.bucket_bytes = static_cast<int64_t>(f.bucket_mb * (1 << 20));
  settings.record_trace = !f.trace_path.empty();
  const double single_ms = single_device_plan(profile, cluster, settings).predicted.step_ms;

  std::optional<EvaluatedPlan> chosen;
  nlohmann::json ranking = nlohmann::json::array();
  if (f.search) {
    const int devices = f.gpus > 0 ? f.gpus : f.stages > 0 ? f.stages * f.groups : cluster.num_devices();
    std::vector<SearchEntry> entries = search_plans(devices, profile, cluster, settings);
    if (replication) {  // only the kind asked for
      const bool free = *replication == Replication::free;
      std::erase_if(entries, [&](const SearchEntry& s) { return s.choice.free_replication != free; });
    }
    BATON_CHECK(!entries.empty() && entries.front().result, "no feasible plan for ", profile.model, " on ", devices,
                " devices of ", cluster.name(), entries.empty() ? std::string() : ": " + entries.front().reason);
    chosen = entries.front().result;
    if (!printed_json) {
      std::printf("%s on %d x %s (%s)%s, batch %d: %zu plans tried\n", profile.model.c_str(), devices,
                  cluster.device(0).name.c_str(), cluster.name().c_str(), basis.c_str(), f.batch, entries.size());
      std::printf("%-4s %-40s %10s %12s %8s %8s %9s %8s %9s\n", "rank", "plan (groups x stages)", "step ms",
                  "samples/s", "bubble", "speedup", "memory GB", "balance", "cross MB");
    }
    int rank = 0, infeasible = 0;
    bool shown_dp = false, shown_pp = false;
    for (const SearchEntry& s : entries) {
      if (!s.result) {
        ++infeasible;
        ranking.push_back({{"plan", s.choice.label()}, {"feasible", false}, {"reason", s.reason}});
        continue;
      }
      ++rank;
      const EvaluatedPlan& e = *s.result;
      const bool pure_dp = e.choice.stages == 1, pure_pp = e.choice.groups == 1 && !e.choice.free_replication;
      ranking.push_back({{"rank", rank},
                         {"plan", e.label()},
                         {"feasible", true},
                         {"groups", e.choice.groups},
                         {"stages", e.choice.stages},
                         {"partitioner", e.choice.partitioner},
                         {"schedule", std::string(schedule_kind_name(e.choice.schedule))},
                         {"micro_batches", e.choice.micro_batches},
                         {"stage_nodes", stage_nodes_json(e, profile)},
                         {"predicted", predicted_json(e, single_ms)}});
      const bool show = rank <= 15 || (pure_dp && !shown_dp) || (pure_pp && !shown_pp);
      shown_dp = shown_dp || (pure_dp && show);
      shown_pp = shown_pp || (pure_pp && show);
      if (!printed_json && show) {
        std::string label = e.label();
        if (pure_dp) label += " [data parallel]";
        std::printf("%-4d %-40s %10.3f %12.1f %7.1f%% %7.2fx %9.2f %8.3f %9.1f\n", rank, label.c_str(),
                    e.predicted.step_ms, e.predicted.throughput, 100 * e.predicted.bubble_fraction,
                    single_ms / e.predicted.step_ms, static_cast<double>(e.peak_memory_bytes) / 1e9, e.balance,
                    e.communication_bytes / 1e6);
      }
    }
    if (!printed_json && infeasible > 0)
      std::printf("(%d infeasible plans not ranked; --json lists why)\n", infeasible);
  } else {
    PlanChoice c;
    c.partitioner = std::string(partitioner_name(partitioner));
    c.schedule = schedule;
    c.stages = f.stages > 0 ? f.stages : f.gpus > 0 ? f.gpus : 1;
    c.groups = f.stages > 0 ? f.groups : 1;
    c.chunks = c.schedule == ScheduleKind::interleaved ? f.chunks : 1;
    c.free_replication = replication == Replication::free;
    BATON_CHECK(
        !c.free_replication || partitioner == PartitionerKind::antichain,
        "--replication free: per-stage replication is the antichain partitioner's (add --partitioner antichain)");
    const int per_group = f.batch / c.groups;
    c.micro_batches = f.micro_batches > 0 ? f.micro_batches : c.stages == 1 ? 1 : std::min(per_group, 4 * c.stages);
    chosen = evaluate_plan(c, profile, cluster, settings);
  }
  nlohmann::json out = plan_file_json(*chosen, profile, cluster, single_ms, grad_sync_name(grad_sync));
  out["profile"]["calibrated"] = planned.calibrated;
  if (f.search) out["ranking"] = ranking;
  if (!f.json_path.empty()) write_file_atomically(f.json_path, out.dump(2) + "\n");
  if (printed_json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("\n%s: %s, %s profile on %s%s, cluster %s, batch %d\n", profile.model.c_str(), chosen->label().c_str(),
                profile.source.c_str(), profile.device.c_str(), basis.c_str(), cluster.name().c_str(), f.batch);
    std::printf("%s\n", stage_table_text(*chosen, profile).c_str());
    print_summary(*chosen, single_ms);
    if (!chosen->note.empty()) std::printf("note: %s\n", chosen->note.c_str());
    if (!f.json_path.empty()) {
      std::printf("wrote the plan to %s (`baton train --plan %s` trains it as written)\n", f.json_path.c_str(),
                  f.json_path.c_str());
    }
  }
  if (!f.trace_path.empty()) {
    write_chrome_trace(f.trace_path,
                       chrome_trace_json(chosen->predicted.events, chosen->predicted.lanes, {"predicted"}));
    if (!printed_json)
      std::printf("wrote the simulated timeline to %s (open in Perfetto or chrome://tracing)\n", f.trace_path.c_str());
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto f = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Split a model into pipeline stages and data-parallel groups over a cluster and predict the step time");
  CLI::Option* model = cmd->add_option("--model", f->model.model, "Model name (see `baton models`)");
  CLI::Option* spec = cmd->add_option("--model-spec", f->spec_path, "Graph spec file (JSON, see export-spec)");
  model->excludes(spec);
  cmd->add_option("--classes", f->model.classes, "Number of classes (reference models)");
  cmd->add_option("--input", f->model.input, "Input size CxHxW, e.g. 3x224x224");
  cmd->add_option("--batch", f->batch, "Mini-batch over all devices (default 128)")->check(positive());
  cmd->add_option("--micro-batches", f->micro_batches,
                  "Micro-batches per group per step (the step has groups x as many; with --replication free, "
                  "the step's; default min(batch per group, 4 x stages))")
      ->check(positive());
  cmd->add_option("--gpus", f->gpus, "Devices to use (a pipeline of this many stages; with --search: every factoring)")
      ->check(positive());
  cmd->add_option("--stages", f->stages, "Pipeline stages per group")->check(positive());
  cmd->add_option("--groups", f->groups, "Data-parallel groups, each a copy of the pipeline (default 1)")
      ->check(positive());
  cmd->add_option("--chunks", f->chunks, "Stages per device for --schedule interleaved (default 2)")->check(positive());
  cmd->add_option("--partitioner", f->partitioner, "uniform, block, antichain or hypergraph (default block)");
  cmd->add_option("--schedule", f->schedule, "gpipe, 1f1b or interleaved (default 1f1b)");
  cmd->add_option(
      "--profile", f->profile_path,
      "A profile JSON from `baton profile`, or pipedream:FILE (PipeDream's graph.txt, measured at --batch)");
  cmd->add_option("--replication", f->replication,
                  "equal (every stage on the same number of devices, default) or free (per stage, antichain only); "
                  "with --search: rank only that kind");
  cmd->add_option("--objective", f->objective,
                  "baton (simulated step time, default) or pipedream (PipeDream's optimiser, exactly --gpus workers)");
  cmd->add_option("--bandwidth-gbs", f->bandwidth_gbs, "--objective pipedream: bandwidth between workers (default 1)")
      ->check(positive());
  cmd->add_option("--activation-compression-ratio", f->activation_compression_ratio,
                  "--objective pipedream: cost activation transfers, divided by this ratio (default: not costed)")
      ->check(positive());
  cmd->add_option("--device-spec", f->device_spec,
                  "Device description for the analytic profile (default: the cluster's)");
  cmd->add_option("--cluster", f->cluster,
                  "h200-nvlink-8, pcie-8, h200-2x8, cpu-N or a JSON file (default h200-nvlink-8)");
  cmd->add_flag("--straight-pipeline", f->straight_pipeline,
                "--objective pipedream: one worker per stage, exactly --gpus stages (PipeDream's straight pipeline)");
  cmd->add_option("--memory-cap", f->memory_cap_gb,
                  "Memory per device in GB (default: the device's; --objective pipedream: PipeDream's memory limit, "
                  "default none)")
      ->check(positive());
  cmd->add_option("--bucket-mb", f->bucket_mb, "Data-parallel all-reduce bucket size in MiB (default 25)")
      ->check(positive());
  cmd->add_flag("--search", f->search,
                "Try every layout, partitioner, schedule and several micro-batch counts; rank them");
  CLI::Option* json =
      cmd->add_option("--json", f->json_path,
                      "Print one JSON object (nodes, stages, schedule, micro_batches, predicted, ranking); --json FILE "
                      "writes it to FILE as a plan file for `baton train --plan FILE`")
          ->expected(0, 1);
  cmd->add_option("--grad-sync", f->grad_sync,
                  "The groups' gradient synchronisation a plan file asks for: bucket (default) or partition");
  cmd->add_option("--trace", f->trace_path, "Write the simulated step as a Chrome trace JSON");
  cmd->callback([f, json, cmd] {
    f->json = json->count() > 0;
    f->given = flags_given(*cmd);
    run_plan(*f);
  });
}

}  // namespace baton::cli
