// `baton bench research`: the research comparison predicted by the simulator (no device runs): data
// parallelism (N x 1), a pure GPipe pipeline (1 x N) and the best hybrid (G x S, G, S >= 2; also with
// GPipe alone) per model and cluster, picked from the planner's search; samples/s, stage splits,
// speed-ups. Table and JSON. See docs/research-comparison.md.
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "models/model_registry.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/planner.h"
#include "runtime/core/error.h"
#include "tools/bench_timer.h"
#include "tools/commands.h"
#include "tools/flag_checks.h"

namespace baton::cli {
namespace {

using namespace baton::parallel;  // NOLINT

struct ResearchBenchFlags {
  std::string models = "resnet50,vgg16";
  std::string clusters;
  int gpus = 8;
  int batch = 256;
  double bucket_mb = 25;
  std::string json_path;
};

std::vector<std::string> split_list(const std::string& flag, const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    BATON_CHECK(!item.empty(), flag, " '", text, "': an empty item (expected a comma-separated list)");
    out.push_back(item);
  }
  BATON_CHECK(!out.empty(), flag, ": nothing given");
  return out;
}

// The three layouts compared, each the fastest feasible entry of the planner's search it admits.
struct Layout {
  const char* key;    // JSON
  const char* title;  // table
  bool (*admits)(const PlanChoice& c, int gpus);
};

const Layout kLayouts[] = {
    {"data_parallel", "data parallel", [](const PlanChoice& c, int gpus) { return c.stages == 1 && c.groups == gpus; }},
    {"pipeline", "pipeline (GPipe)",
     [](const PlanChoice& c, int gpus) {
       return c.groups == 1 && c.stages == gpus && c.chunks == 1 && !c.free_replication &&
              c.schedule == ScheduleKind::gpipe;
     }},
    {"hybrid", "hybrid (best G x S)",
     [](const PlanChoice& c, int) { return c.groups >= 2 && c.stages >= 2 && !c.free_replication; }},
    {"hybrid_gpipe", "hybrid (GPipe)",
     [](const PlanChoice& c, int) {
       return c.groups >= 2 && c.stages >= 2 && c.chunks == 1 && !c.free_replication &&
              c.schedule == ScheduleKind::gpipe;
     }},
};

nlohmann::json stages_json(const EvaluatedPlan& e, const Profile& p) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageSummary& row : e.table) {
    stages.push_back({{"first", p.nodes[row.nodes.front()].name},
                      {"last", p.nodes[row.nodes.back()].name},
                      {"nodes", row.nodes.size()},
                      {"fwd_ms", row.fwd_ms},
                      {"bwd_ms", row.bwd_ms},
                      {"param_bytes", row.param_bytes},
                      {"boundary_bytes", row.boundary_bytes_out},
                      {"memory_bytes", row.memory_bytes},
                      {"replicas", row.replicas},
                      {"devices", e.plan.stages[row.stage].devices}});
  }
  return stages;
}

// "conv1..layer2.0.conv2 (40) | layer2.0.bn2..loss (136)": each stage's first and last node and size.
std::string split_text(const EvaluatedPlan& e, const Profile& p) {
  std::string s;
  for (const StageSummary& row : e.table) {
    if (!s.empty()) s += " | ";
    s += p.nodes[row.nodes.front()].name;
    if (row.nodes.size() > 1) s += ".." + p.nodes[row.nodes.back()].name;
    s += " (" + std::to_string(row.nodes.size()) + ")";
  }
  return s;
}

// A speed-up as "+12.3%", or "n/a" when null.
std::string percent_text(const nlohmann::json& ratio) {
  if (ratio.is_null()) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100 * (ratio.get<double>() - 1));
  return text;
}

nlohmann::json compare(const std::string& model, const std::string& cluster_name, const ResearchBenchFlags& f) {
  const Cluster cluster = load_cluster(cluster_name);
  BATON_CHECK(f.gpus <= cluster.num_devices(), "--gpus ", f.gpus, ": cluster '", cluster.name(), "' has ",
              cluster.num_devices(), " devices");
  // The same analytic profile `baton plan --model` makes: the cluster's device, batch sizes 1, 2, 4, ...
  // up to --batch.
  const Graph graph = models::build_model(model, models::default_options(model));
  AnalyticOptions o;
  o.batch_sizes.clear();
  for (int b = 1; b <= f.batch; b *= 2) o.batch_sizes.push_back(b);
  if (o.batch_sizes.back() != f.batch) o.batch_sizes.push_back(f.batch);
  const Profile profile = analytic_profile(graph, model, cluster.device(0), o);

  PlanSettings settings;
  settings.batch = f.batch;
  settings.bucket_bytes = static_cast<int64_t>(f.bucket_mb * (1 << 20));
  const std::vector<SearchEntry> entries = search_plans(f.gpus, profile, cluster, settings);

  std::printf("\n%s on %d x %s (%s), batch %d, %zu plans searched\n", model.c_str(), f.gpus,
              cluster.device(0).name.c_str(), cluster.name().c_str(), f.batch, entries.size());
  std::printf("%-20s %-36s %10s %11s %8s %9s %9s %10s\n", "layout", "plan", "step ms", "samples/s", "bubble", "vs DP",
              "vs pipe", "memory GB");
  // The fastest feasible entry each layout admits (entries are fastest first), else the first refusal.
  std::vector<const EvaluatedPlan*> best;
  std::vector<std::string> reasons;
  for (const Layout& layout : kLayouts) {
    const EvaluatedPlan* found = nullptr;
    std::string reason;
    for (const SearchEntry& s : entries) {
      if (!layout.admits(s.choice, f.gpus)) continue;
      if (s.result) {
        found = &*s.result;
        break;
      }
      if (reason.empty()) reason = s.reason;
    }
    best.push_back(found);
    reasons.push_back(reason.empty() ? "the search has no such layout" : reason);
  }
  const double dp_ms = best[0] != nullptr ? best[0]->predicted.step_ms : 0;
  const double pipe_ms = best[1] != nullptr ? best[1]->predicted.step_ms : 0;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < best.size(); ++i) {
    if (best[i] == nullptr) {
      rows.push_back({{"layout", kLayouts[i].key}, {"feasible", false}, {"reason", reasons[i]}});
      std::printf("%-20s infeasible: %s\n", kLayouts[i].title, reasons[i].c_str());
      continue;
    }
    const EvaluatedPlan& e = *best[i];
    // null (JSON) and "n/a" (table) where the reference layout is infeasible.
    const nlohmann::json over_dp = dp_ms > 0 ? nlohmann::json(dp_ms / e.predicted.step_ms) : nlohmann::json();
    const nlohmann::json over_pipe = pipe_ms > 0 ? nlohmann::json(pipe_ms / e.predicted.step_ms) : nlohmann::json();
    // Data parallelism has no partition or schedule: say how its gradients are reduced instead.
    const std::string label = e.choice.stages > 1         ? e.label()
                              : settings.bucket_bytes > 0 ? std::to_string(e.choice.groups) + "x1, " +
                                                                human_bytes(settings.bucket_bytes) + " buckets"
                                                          : std::to_string(e.choice.groups) + "x1, one all-reduce";
    rows.push_back({{"layout", kLayouts[i].key},
                    {"feasible", true},
                    {"plan", label},
                    {"groups", e.choice.groups},
                    {"stages", e.choice.stages},
                    {"chunks", e.choice.chunks},
                    {"partitioner", e.choice.partitioner},
                    {"schedule", std::string(schedule_kind_name(e.choice.schedule))},
                    {"micro_batches", e.choice.micro_batches},
                    {"step_ms", e.predicted.step_ms},
                    {"throughput", e.predicted.throughput},
                    {"bubble_fraction", e.predicted.bubble_fraction},
                    {"speedup_over_data_parallel", over_dp},
                    {"speedup_over_pipeline", over_pipe},
                    {"peak_memory_bytes", e.peak_memory_bytes},
                    {"balance", e.balance},
                    {"communication_bytes", e.communication_bytes},
                    {"stage_split", stages_json(e, profile)}});
    std::printf("%-20s %-36s %10.2f %11.1f %7.1f%% %9s %9s %10.2f\n", kLayouts[i].title, label.c_str(),
                e.predicted.step_ms, e.predicted.throughput, 100 * e.predicted.bubble_fraction,
                percent_text(over_dp).c_str(), percent_text(over_pipe).c_str(),
                static_cast<double>(e.peak_memory_bytes) / 1e9);
    if (e.table.size() > 1) std::printf("%20s split: %s\n", "", split_text(e, profile).c_str());
  }
  return {{"model", model},
          {"cluster", cluster.name()},
          {"cluster_description", cluster_to_json(cluster)},
          {"plans_searched", entries.size()},
          {"rows", rows}};
}

void run_research(const ResearchBenchFlags& f) {
  BATON_CHECK(!f.clusters.empty(), "--clusters: give one or more cluster names or JSON files (e.g. ",
              "tools/clusters/v100-nvlink-8.json,tools/clusters/v100-pcie-8.json)");
  BATON_CHECK(f.gpus >= 4, "--gpus ", f.gpus, ": the hybrid needs G, S >= 2 with G x S = --gpus (at least 4)");
  BATON_CHECK(f.bucket_mb >= 0, "--bucket-mb must be >= 0");
  const std::vector<std::string> models = split_list("--models", f.models);
  const std::vector<std::string> clusters = split_list("--clusters", f.clusters);
  std::printf("predicted by the simulator (analytic profiles; nothing runs on a device)\n");
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& model : models) {
    for (const std::string& cluster : clusters) results.push_back(compare(model, cluster, f));
  }
  nlohmann::json json = {{"benchmark", "research"}, {"predicted", true},        {"gpus", f.gpus},
                         {"batch", f.batch},        {"bucket_mb", f.bucket_mb}, {"results", results}};
  write_bench_json(f.json_path, json);
}

}  // namespace

void add_bench_research_command(CLI::App& bench) {
  auto f = std::make_shared<ResearchBenchFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "research", "Predicted (simulator): data parallel vs GPipe pipeline vs best hybrid per model and cluster");
  cmd->add_option("--models", f->models, "Comma-separated reference models (default resnet50,vgg16)");
  cmd->add_option("--clusters", f->clusters,
                  "Comma-separated cluster names or JSON files (e.g. tools/clusters/*.json)");
  cmd->add_option("--gpus", f->gpus, "Devices of each cluster to use (default 8)")->check(positive());
  cmd->add_option("--batch", f->batch, "Mini-batch over all devices (default 256)")->check(positive());
  cmd->add_option("--bucket-mb", f->bucket_mb,
                  "Data-parallel all-reduce buckets in MiB, overlapped with backward (default 25; 0: one all-reduce "
                  "after the whole backward)");
  cmd->add_option("--json", f->json_path, "Also write every figure as JSON to this file (atomically)");
  cmd->callback([f] { run_research(*f); });
}

}  // namespace baton::cli
