// The hypergraph partitioner: multilevel acyclic k-way partitioning of the model's hypergraph for
// minimum connectivity - 1 under a load-balance bound (algorithm in docs/planner.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>

#include "parallel/plan/cost_model.h"
#include "parallel/plan/hypergraph.h"
#include "parallel/plan/partition_quality.h"
#include "parallel/plan/partitioner.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"

namespace baton::parallel {
namespace {

constexpr int kVCycles = 4;  // independent coarsen / split / refine runs
// Topological orders tried for the split of the coarsest graph beyond index order and the heavy-chain
// order: heavy-chain orders with random tie-breaking, and random orders (Kahn with random priorities).
constexpr int kRandomHeavyChainOrders = 2;
constexpr int kRandomPlainOrders = 4;

struct Candidate {
  std::vector<int> part;
  double cost = 0;
  double max_load = 0;
};

bool better(const Candidate& a, const std::optional<Candidate>& b) {
  if (!b) return true;
  const double eps = 1e-9 * (1.0 + std::abs(b->cost));
  if (a.cost < b->cost - eps) return true;
  return a.cost <= b->cost + eps && a.max_load < b->max_load;
}

Candidate evaluate(const Hypergraph& graph, std::vector<int> part, int k) {
  Candidate c;
  c.cost = connectivity_cost(graph, part, k);
  const std::vector<double> loads = part_loads(graph, part, k);
  c.max_load = *std::max_element(loads.begin(), loads.end());
  c.part = std::move(part);
  return c;
}

// Orders of a graph to split: index order (a topological order for profiles and coarse graphs),
// the heavy-chain order, heavy-chain orders with random tie-breaking and random topological orders.
std::vector<std::vector<int>> split_orders(const Hypergraph& graph, int heavy, int plain, std::mt19937& rng) {
  std::vector<std::vector<int>> orders;
  std::vector<int> identity(graph.num_vertices());
  std::iota(identity.begin(), identity.end(), 0);
  orders.push_back(std::move(identity));
  orders.push_back(topological_order(graph, true, {}));
  for (int i = 0; i < heavy; ++i)
    orders.push_back(topological_order(graph, true, random_keys(graph.num_vertices(), rng)));
  for (int i = 0; i < plain; ++i)
    orders.push_back(topological_order(graph, false, random_keys(graph.num_vertices(), rng)));
  return orders;
}

// One V-cycle: coarsen, split the coarsest graph along its best order, refine while projecting back.
std::optional<Candidate> v_cycle(const Hypergraph& graph, int k, double bound, double max_cluster_weight,
                                 std::mt19937& rng) {
  const std::vector<CoarseLevel> levels = coarsen(graph, std::max(3 * k, 24), max_cluster_weight, rng);
  const Hypergraph& coarsest = levels.empty() ? graph : levels.back().graph;
  log_debug("partition hypergraph: coarsened ", graph.num_vertices(), " vertices to ", coarsest.num_vertices(), " in ",
            levels.size(), " levels");
  std::optional<Candidate> best;
  for (const std::vector<int>& order : split_orders(coarsest, kRandomHeavyChainOrders, kRandomPlainOrders, rng)) {
    if (auto part = best_ordered_split(coarsest, order, k, bound)) {
      Candidate c = evaluate(coarsest, std::move(*part), k);
      if (better(c, best)) best = std::move(c);
    }
  }
  if (!best) return std::nullopt;
  std::vector<int> part = std::move(best->part);
  refine_partition(coarsest, part, k, bound, rng);
  for (int level = static_cast<int>(levels.size()) - 1; level >= 0; --level) {
    const Hypergraph& finer = level == 0 ? graph : levels[level - 1].graph;
    std::vector<int> projected(finer.num_vertices());
    for (int v = 0; v < finer.num_vertices(); ++v) projected[v] = part[levels[level].fine_to_coarse[v]];
    part = std::move(projected);
    refine_partition(finer, part, k, bound, rng);
  }
  return evaluate(graph, std::move(part), k);
}

void check_memory(const PartitionRequest& request, const Plan& plan, double micro_batch) {
  const Profile& profile = *request.profile;
  const double cap = memory_cap_bytes(request);
  for (int s = 0; s < plan.num_stages(); ++s) {
    const Stage& stage = plan.stages[s];
    const int holding = in_flight_bound(request, s, plan.num_stages(), stage.replicas);
    const int64_t bytes = stage_memory(profile, stage.nodes, micro_batch, holding).total();
    BATON_CHECK(static_cast<double>(bytes) <= cap, "partition hypergraph: stage ", s, " of ", plan.num_stages(), " (",
                stage.nodes.size(), " nodes from '", profile.nodes[stage.nodes.front()].name, "') needs ",
                static_cast<double>(bytes) / 1e9, " GB (", bytes, " bytes) with ", holding,
                " micro-batches in flight under ", schedule_kind_name(request.schedule), ", over the memory cap of ",
                cap / 1e9, " GB (try more stages, more micro-batches or a smaller batch)");
  }
}

}  // namespace

HypergraphResult partition_hypergraph_detailed(const PartitionRequest& request) {
  check_request(request);
  BATON_CHECK(request.balance_tolerance >= 0, "partition hypergraph: balance_tolerance must be >= 0 (got ",
              request.balance_tolerance, ")");
  const Profile& profile = *request.profile;
  const int n = profile.num_nodes();
  const int k = request.stages;
  const double micro_batch = static_cast<double>(request.batch) / request.micro_batches;
  // Every stage has the same replicas, each computing whole micro-batches: weights at one micro-batch.
  const Hypergraph graph = hypergraph_from_profile(profile, micro_batch, micro_batch);

  HypergraphResult result;
  const double mean = graph.total_weight() / k;
  result.requested_bound_ms = (1.0 + request.balance_tolerance) * mean;
  std::seed_seq seed{request.seed, 0u};
  std::mt19937 rng(seed);
  const std::vector<std::vector<int>> fine_orders = split_orders(graph, 1, 0, rng);
  double achievable = std::numeric_limits<double>::infinity();
  for (const auto& order : fine_orders) achievable = std::min(achievable, min_max_split_load(graph, order, k));
  result.bound_ms = result.requested_bound_ms;
  if (achievable > result.requested_bound_ms * (1 + 1e-12)) {
    result.bound_ms = achievable;
    result.relaxed = true;
    const auto heaviest = std::max_element(graph.vertex_weight.begin(), graph.vertex_weight.end());
    const std::string why = *heaviest > result.requested_bound_ms
                                ? detail::concat("node '", profile.nodes[heaviest - graph.vertex_weight.begin()].name,
                                                 "' alone takes ", *heaviest, " ms")
                                : std::string("the nodes are too coarse to balance the stages more evenly");
    result.note =
        detail::concat("balance bound relaxed from ", result.requested_bound_ms, " ms (", 1 + request.balance_tolerance,
                       " x the mean stage load) to ", achievable, " ms, the smallest maximum stage load of ", k,
                       " contiguous stages along the topological orders tried: ", why);
    log_debug("partition hypergraph: ", result.note);
  }

  // Candidates: the best ordered split of each fine order, refined, and kVCycles V-cycles.
  std::optional<Candidate> best;
  for (const auto& order : fine_orders) {
    if (auto part = best_ordered_split(graph, order, k, result.bound_ms)) {
      refine_partition(graph, *part, k, result.bound_ms, rng);
      Candidate c = evaluate(graph, std::move(*part), k);
      log_debug("partition hypergraph: flat split of order ", &order - fine_orders.data(), ": ", c.cost,
                " bytes, max load ", c.max_load, " ms");
      if (better(c, best)) best = std::move(c);
    }
  }
  const double max_cluster_weight = std::max(result.bound_ms - mean, 0.02 * mean);
  for (int cycle = 0; cycle < kVCycles; ++cycle) {
    std::seed_seq cycle_seed{request.seed, static_cast<unsigned>(cycle) + 1u};
    std::mt19937 cycle_rng(cycle_seed);
    if (auto c = v_cycle(graph, k, result.bound_ms, max_cluster_weight, cycle_rng)) {
      log_debug("partition hypergraph: V-cycle ", cycle, ": ", c->cost, " bytes, max load ", c->max_load, " ms");
      if (better(*c, best)) best = std::move(c);
    }
  }
  BATON_CHECK(best.has_value(), "partition hypergraph: internal error: no split of '", profile.model, "' into ", k,
              " stages within ", result.bound_ms, " ms");
  BATON_CHECK(is_ordered_partition(graph, best->part, k),
              "partition hypergraph: internal error: the partition is not acyclic");
  result.comm_bytes = best->cost;
  result.max_load_ms = best->max_load;

  Plan& plan = result.plan;
  plan.model = profile.model;
  plan.partitioner = "hypergraph";
  plan.batch = request.batch;
  plan.micro_batches = request.micro_batches;
  plan.chunks_per_device = request.chunks_per_device;
  plan.stages.assign(k, Stage{});
  for (int v = 0; v < n; ++v) plan.stages[best->part[v]].nodes.push_back(v);
  for (Stage& stage : plan.stages) stage.replicas = request.replicas;
  assign_devices(plan);
  validate_plan(plan, profile);
  check_memory(request, plan, micro_batch);
  return result;
}

Plan partition_hypergraph(const PartitionRequest& request) { return partition_hypergraph_detailed(request).plan; }

}  // namespace baton::parallel
