// `baton plan --json`: the chosen plan (nodes, stages, schedule, predictions) and each ranked plan's stages.
#pragma once

#include <nlohmann/json.hpp>

#include "parallel/plan/planner.h"

namespace baton::cli {

// step_ms, throughput, bubble_fraction, speedup over one device (`single_ms`), peak memory, balance, bytes.
nlohmann::json predicted_json(const parallel::EvaluatedPlan& e, double single_ms);
// The whole plan: model, profile, partitioner, schedule, micro_batches, nodes, stages, predicted.
nlohmann::json plan_json(const parallel::EvaluatedPlan& e, const parallel::Profile& p, double single_ms);
// Each stage's node names and replicas (the stages of a plan in --search's ranking).
nlohmann::json stage_nodes_json(const parallel::EvaluatedPlan& e, const parallel::Profile& p);

}  // namespace baton::cli
