// `baton plan --objective pipedream`: the optimum of PipeDream's single-level optimiser, printed as a stage
// table or as JSON; and the profile sources `baton plan` reads.
#include "tools/plan_pipedream.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "parallel/plan/pipedream_objective.h"
#include "runtime/core/error.h"

namespace baton::cli {

namespace {

constexpr std::string_view kPipeDreamPrefix = "pipedream:";

// "first .. last (n nodes)" of a stage.
std::string stage_span(const parallel::PipeDreamGraph& graph, const parallel::PipeDreamStage& stage) {
  const std::string& first = graph.nodes[static_cast<size_t>(stage.nodes.front())].id;
  const std::string& last = graph.nodes[static_cast<size_t>(stage.nodes.back())].id;
  return first + " .. " + last + " (" + std::to_string(stage.nodes.size()) + " nodes)";
}

}  // namespace

bool is_pipedream_profile(const std::string& path) { return path.rfind(kPipeDreamPrefix, 0) == 0; }

parallel::PipeDreamGraph load_plan_pipedream_graph(const std::string& path) {
  BATON_CHECK(is_pipedream_profile(path), "expected pipedream:FILE, got '", path, "'");
  return parallel::read_pipedream_graph(path.substr(kPipeDreamPrefix.size()));
}

parallel::Profile load_plan_profile(const std::string& path, int batch) {
  if (!is_pipedream_profile(path)) return parallel::load_profile(path);
  return parallel::pipedream_profile(load_plan_pipedream_graph(path), batch);
}

void run_pipedream_objective(const PipeDreamRequest& request) {
  BATON_CHECK(request.workers >= 1, "--objective pipedream: give the number of workers with --gpus N");
  parallel::PipeDreamSettings settings;
  settings.workers = request.workers;
  settings.bandwidth_bytes_per_s = request.bandwidth_gbs * 1e9;
  settings.activation_compression_ratio = request.activation_compression_ratio;
  if (request.memory_limit_gb) settings.memory_bytes_per_worker = *request.memory_limit_gb * 1e9;
  settings.straight_pipeline = request.straight_pipeline;
  const parallel::PipeDreamPlan plan = parallel::pipedream_optimum(request.graph, settings);
  if (request.json) {
    nlohmann::json stages = nlohmann::json::array();
    for (const parallel::PipeDreamStage& stage : plan.stages) {
      nlohmann::json nodes = nlohmann::json::array();
      for (int n : stage.nodes) nodes.push_back(request.graph.nodes[static_cast<size_t>(n)].id);
      stages.push_back({{"nodes", nodes}, {"replicas", stage.replicas}, {"compute_s", stage.compute_s}});
    }
    const nlohmann::json ratio = request.activation_compression_ratio
                                     ? nlohmann::json(*request.activation_compression_ratio)
                                     : nlohmann::json(nullptr);
    const nlohmann::json out = {{"objective", "pipedream"},
                                {"model", request.graph.source},
                                {"workers", request.workers},
                                {"bandwidth_gbs", request.bandwidth_gbs},
                                {"activation_compression_ratio", ratio},
                                {"memory_limit_gb", request.memory_limit_gb ? nlohmann::json(*request.memory_limit_gb)
                                                                            : nlohmann::json(nullptr)},
                                {"straight_pipeline", request.straight_pipeline},
                                {"states", plan.states},
                                {"pipeline_time_s", plan.pipeline_time_s},
                                {"single_worker_time_s", plan.single_worker_time_s},
                                {"data_parallel_time_s", plan.data_parallel_time_s},
                                {"stages", stages}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  char transfers[64] = "not costed";
  if (request.activation_compression_ratio) {
    std::snprintf(transfers, sizeof transfers, "costed (compression ratio %g)", *request.activation_compression_ratio);
  }
  char memory[64] = "";
  if (request.memory_limit_gb) std::snprintf(memory, sizeof memory, ", memory limit %g GB", *request.memory_limit_gb);
  std::printf("%s: PipeDream's objective, %d workers%s%s, %g GB/s, activation transfers %s; %d antichain states\n",
              request.graph.source.c_str(), request.workers, request.straight_pipeline ? " in a straight pipeline" : "",
              memory, request.bandwidth_gbs, transfers, plan.states);
  std::printf("time per stage %.6f s (one worker %.6f s: %.2fx; data parallel %.6f s: %.2fx)\n", plan.pipeline_time_s,
              plan.single_worker_time_s, plan.single_worker_time_s / plan.pipeline_time_s, plan.data_parallel_time_s,
              plan.data_parallel_time_s / plan.pipeline_time_s);
  std::printf("%-6s %-44s %9s %12s\n", "stage", "nodes", "replicas", "compute s");
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const parallel::PipeDreamStage& stage = plan.stages[s];
    std::printf("%-6zu %-44s %9d %12.6f\n", s, stage_span(request.graph, stage).c_str(), stage.replicas,
                stage.compute_s);
  }
}

}  // namespace baton::cli
