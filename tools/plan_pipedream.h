// `baton plan`'s profile sources and its --objective pipedream: PipeDream's optimiser reproduced.
#pragma once

#include <optional>
#include <string>

#include "parallel/plan/pipedream_graph.h"
#include "parallel/plan/profile.h"

namespace baton::cli {

// --profile FILE (a baton profile JSON) or --profile pipedream:FILE (PipeDream's graph.txt, measured at
// mini-batch `batch`).
bool is_pipedream_profile(const std::string& path);
parallel::Profile load_plan_profile(const std::string& path, int batch);
// The graph of --profile pipedream:FILE.
parallel::PipeDreamGraph load_plan_pipedream_graph(const std::string& path);

struct PipeDreamRequest {
  parallel::PipeDreamGraph graph;
  int workers = 0;
  double bandwidth_gbs = 1;  // PipeDream's default: 1 GB/s
  std::optional<double> activation_compression_ratio;
  std::optional<double> memory_limit_gb;  // PipeDream's memory limit per worker (none: no limit)
  bool straight_pipeline = false;         // PipeDream's straight pipeline: one worker per stage
  bool json = false;
};

// Prices the graph as PipeDream's optimiser does and prints the optimum (text or one JSON object).
void run_pipedream_objective(const PipeDreamRequest& request);

}  // namespace baton::cli
