// PipeDream's objective, for exact reproduction: plans priced as PipeDream's single-level optimiser prices
// them (msr-fiddle/pipedream, optimizer/optimizer_graph_hierarchical.py, compute_partitioning and main),
// searched over the same antichain states, with exactly `workers` workers, optionally under PipeDream's memory
// limit (--use_memory_constraint --memory_size) and in its straight-pipeline mode (--straight_pipeline).
// docs/planner.md gives each formula with its source.
#pragma once

#include <optional>
#include <vector>

#include "parallel/plan/antichain.h"
#include "parallel/plan/pipedream_graph.h"

namespace baton::parallel {

struct PipeDreamSettings {
  int workers = 1;
  double bandwidth_bytes_per_s = 1e9;
  // PipeDream's --activation_compression_ratio: without it, activation transfers are not costed.
  std::optional<double> activation_compression_ratio;
  // PipeDream's --use_memory_constraint with --memory_size: the bytes a worker may stash (activations and
  // parameters of its stage, times the mini-batches in flight). None: no limit (PipeDream's default).
  std::optional<double> memory_bytes_per_worker;
  // PipeDream's --straight_pipeline: no replication, so exactly `workers` stages of one worker each.
  bool straight_pipeline = false;
};

struct PipeDreamStage {
  std::vector<int> nodes;  // node indices of the graph, ascending
  int replicas = 1;
  double compute_s = 0;  // forward + backward of the stage's nodes, one replica, the whole mini-batch
};

struct PipeDreamPlan {
  // PipeDream's "time per stage in pipeline": the slowest stage's time per mini-batch, in seconds.
  double pipeline_time_s = 0;
  // PipeDream's data-parallel comparison: every worker runs the whole model on 1/workers of the batch.
  double data_parallel_time_s = 0;
  double single_worker_time_s = 0;  // forward + backward of every node
  int states = 0;                   // antichain states searched (PipeDream's "Total number of states")
  std::vector<PipeDreamStage> stages;
};

// The optimum over chains of nested antichain states of `graph` (its Profile's CutStates::antichains),
// each stage replicated r >= 1 times (r = 1 in a straight pipeline) with the replicas adding up to `workers`.
// Throws when no such plan fits the memory limit, or a straight pipeline has more workers than states.
PipeDreamPlan pipedream_optimum(const PipeDreamGraph& graph, const PipeDreamSettings& settings);

}  // namespace baton::parallel
