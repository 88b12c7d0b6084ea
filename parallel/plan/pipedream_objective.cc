// PipeDream's single-level optimiser, priced exactly as optimizer_graph_hierarchical.py prices plans, over
// baton's antichain states (the down-sets PipeDream's antichain DAG enumerates).
#include "parallel/plan/pipedream_objective.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

// Strict ancestors of every node (producers, their producers, ...), as sets.
std::vector<std::set<int>> ancestors_of(const PipeDreamGraph& graph) {
  std::vector<std::set<int>> ancestors(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {  // topological order: producers come first
    for (int p : graph.nodes[n].producers) {
      ancestors[n].insert(p);
      ancestors[n].insert(ancestors[static_cast<size_t>(p)].begin(), ancestors[static_cast<size_t>(p)].end());
    }
  }
  return ancestors;
}

// PipeDream's augmented antichain (graph.py, augment_antichain): the antichain, plus every ancestor p of
// an antichain node a that has a consumer which is neither a nor another ancestor of a. The bytes it
// sums are the state's output_activation_size (optimizer_graph_hierarchical.py, main).
double output_activation_bytes(const PipeDreamGraph& graph, const std::vector<std::set<int>>& ancestors,
                               const std::vector<int>& antichain) {
  std::set<int> augmented(antichain.begin(), antichain.end());
  for (int a : antichain) {
    const std::set<int>& before = ancestors[static_cast<size_t>(a)];
    for (int p : before) {
      for (int q : graph.nodes[static_cast<size_t>(p)].consumers) {
        if (q != a && before.count(q) == 0) augmented.insert(p);
      }
    }
  }
  double bytes = 0;
  for (int n : augmented) bytes += graph.nodes[static_cast<size_t>(n)].activation_bytes;
  return bytes;
}

// One cell of compute_partitioning's table A[0][j][m]: the best time of the states up to j on m + 1
// workers, and how it ends: the last stage starts after state `split` (0: one stage from the start)
// and has `replicas` workers. An infinite time is PipeDream's None: no plan fits.
struct Cell {
  double time = std::numeric_limits<double>::infinity();
  int split = 0;
  int replicas = 1;
};

// PipeDream's memory check (compute_partitioning, both loops): a stage of `bytes` activations and parameters on
// `replicas` workers, with `used` of the `workers` taken by it and the stages before it, stashes
// ceil((workers - used) / replicas) mini-batches. The whole model on every worker, and a last stage, stash
// none: PipeDream never refuses those.
bool fits_memory(const PipeDreamSettings& settings, double bytes, int used, int replicas) {
  if (!settings.memory_bytes_per_worker) return true;
  const double in_flight = std::ceil(static_cast<double>(settings.workers - used) / replicas);
  return in_flight * bytes <= *settings.memory_bytes_per_worker;
}

}  // namespace

PipeDreamPlan pipedream_optimum(const PipeDreamGraph& graph, const PipeDreamSettings& settings) {
  BATON_CHECK(settings.workers >= 1, "PipeDream objective: workers must be at least 1, got ", settings.workers);
  BATON_CHECK(settings.bandwidth_bytes_per_s > 0, "PipeDream objective: bandwidth must be positive");
  BATON_CHECK(!settings.activation_compression_ratio || *settings.activation_compression_ratio > 0,
              "PipeDream objective: the activation compression ratio must be positive");
  BATON_CHECK(!settings.memory_bytes_per_worker || *settings.memory_bytes_per_worker > 0,
              "PipeDream objective: the memory limit must be positive");
  BATON_CHECK(!settings.straight_pipeline || static_cast<size_t>(settings.workers) <= graph.nodes.size(), graph.source,
              ": a straight pipeline of ", settings.workers, " workers needs as many stages, and the graph has only ",
              graph.nodes.size(), " nodes");
  int sources = 0;
  for (const PipeDreamNode& node : graph.nodes) sources += node.producers.empty() ? 1 : 0;
  BATON_CHECK(sources == 1, graph.source,
              ": PipeDream's optimiser grows its states from one source node; this graph has ", sources,
              " once the Input nodes are dropped");

  const Profile profile = pipedream_profile(graph, 1);
  const CutStates cuts = CutStates::antichains(profile);
  const std::vector<std::set<int>> ancestors = ancestors_of(graph);
  const int states = cuts.num_states(), full = cuts.full_state();
  // Per state (0 is the empty one): seconds of forward + backward, parameter bytes, activation bytes of its
  // nodes (PipeDream's state activation_size), bytes sent onwards.
  std::vector<double> compute(static_cast<size_t>(states), 0.0), params(compute), activations(compute),
      out_bytes(compute);
  for (int s = 1; s < states; ++s) {
    for (int n = 0; n < cuts.num_nodes(); ++n) {
      if (!cuts.contains(s, n)) continue;
      const PipeDreamNode& node = graph.nodes[static_cast<size_t>(n)];
      compute[static_cast<size_t>(s)] += (node.forward_ms + node.backward_ms) / 1000.0;
      params[static_cast<size_t>(s)] += node.parameter_bytes;
      activations[static_cast<size_t>(s)] += node.activation_bytes;
    }
    out_bytes[static_cast<size_t>(s)] = output_activation_bytes(graph, ancestors, cuts.antichain(s));
  }

  const int workers = settings.workers;
  const double bandwidth = settings.bandwidth_bytes_per_s;
  // A[j][m]: first every state as one stage replicated m + 1 times (the all-reduce of its parameters,
  // 4·m·P / (B·(m + 1)), added to its compute, the sum divided among the replicas); a straight pipeline
  // replicates nothing, so only m = 0.
  const int max_replicas_first = settings.straight_pipeline ? 1 : workers;
  std::vector<std::vector<Cell>> a(static_cast<size_t>(states), std::vector<Cell>(static_cast<size_t>(workers)));
  for (int j = 1; j < states; ++j) {
    for (int m = 0; m < max_replicas_first; ++m) {
      const double stage_bytes = activations[static_cast<size_t>(j)] + params[static_cast<size_t>(j)];
      if (!fits_memory(settings, stage_bytes, m + 1, m + 1)) continue;
      const double all_reduce = 4.0 * m * params[static_cast<size_t>(j)] / (bandwidth * (m + 1));
      a[static_cast<size_t>(j)][static_cast<size_t>(m)] = {(compute[static_cast<size_t>(j)] + all_reduce) / (m + 1), 0,
                                                           m + 1};
    }
  }
  // Then a last stage (k, j] on m' workers after the best of the states up to k on the other m + 1 - m'.
  for (int m = 1; m < workers; ++m) {
    for (int j = 1; j < states; ++j) {
      Cell best = a[static_cast<size_t>(j)][static_cast<size_t>(m)];
      for (int k : cuts.inner_states(j)) {
        if (k == cuts.empty_state()) continue;
        for (int r = 1; r <= (settings.straight_pipeline ? 1 : m); ++r) {
          const double stage_bytes = activations[static_cast<size_t>(j)] - activations[static_cast<size_t>(k)] +
                                     params[static_cast<size_t>(j)] - params[static_cast<size_t>(k)];
          if (!fits_memory(settings, stage_bytes, m + 1, r)) continue;
          double input_transfer = 2.0 * out_bytes[static_cast<size_t>(k)] / (bandwidth * r);
          double output_transfer = j == full ? 0.0 : 2.0 * out_bytes[static_cast<size_t>(j)] / (bandwidth * r);
          const double stage_params = params[static_cast<size_t>(j)] - params[static_cast<size_t>(k)];
          const double last_stage = (compute[static_cast<size_t>(j)] - compute[static_cast<size_t>(k)] +
                                     4.0 * (r - 1) * stage_params / (bandwidth * r)) /
                                    r;
          double time = std::max(a[static_cast<size_t>(k)][static_cast<size_t>(m - r)].time, last_stage);
          if (settings.activation_compression_ratio) {
            input_transfer /= *settings.activation_compression_ratio;
            output_transfer /= *settings.activation_compression_ratio;
            time = std::max({time, input_transfer, output_transfer});
          }
          if (time < best.time) best = {time, k, r};
        }
      }
      a[static_cast<size_t>(j)][static_cast<size_t>(m)] = best;
    }
  }

  PipeDreamPlan plan;
  plan.states = states - 1;  // PipeDream has no empty state
  // Only the memory limit leaves the answer without a plan (a straight pipeline of at most one worker per node
  // always exists, and without it so does the whole model on every worker).
  BATON_CHECK(std::isfinite(a[static_cast<size_t>(full)][static_cast<size_t>(workers - 1)].time), graph.source,
              ": PipeDream's optimiser finds no ", settings.straight_pipeline ? "straight pipeline" : "plan",
              " of exactly ", workers, " workers that keeps each worker's stashed activations and parameters within ",
              "the memory limit of ", settings.memory_bytes_per_worker.value_or(0) / 1e9, " GB");
  plan.pipeline_time_s = a[static_cast<size_t>(full)][static_cast<size_t>(workers - 1)].time;
  plan.single_worker_time_s = compute[static_cast<size_t>(full)];
  plan.data_parallel_time_s = (compute[static_cast<size_t>(full)] +
                               4.0 * (workers - 1) * params[static_cast<size_t>(full)] / (bandwidth * workers)) /
                              workers;
  for (int j = full, m = workers - 1;;) {
    const Cell& cell = a[static_cast<size_t>(j)][static_cast<size_t>(m)];
    PipeDreamStage stage;
    stage.nodes = cuts.stage_nodes(cell.split, j);
    stage.replicas = cell.replicas;
    stage.compute_s = compute[static_cast<size_t>(j)] - compute[static_cast<size_t>(cell.split)];
    plan.stages.insert(plan.stages.begin(), stage);
    if (cell.split == 0) break;
    m -= cell.replicas;
    j = cell.split;
  }
  return plan;
}

}  // namespace baton::parallel
