// Directed hypergraph of a profiled model and the pieces of the multilevel acyclic k-way
// partitioner built on it (coarsening, ordered splits, FM refinement); see docs/planner.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "parallel/plan/profile.h"

namespace baton::parallel {

// A net: one value, produced by `source` and read by `sinks` (distinct, never the source).
struct HyperNet {
  int source = 0;
  std::vector<int> sinks;
  double weight = 0;  // bytes per micro-batch
};

// Vertices with weights and directed nets. The graph of edges source -> sink is a DAG. Partitions
// are "ordered": part[source] <= part[sink] for every edge, so the quotient graph of parts is
// acyclic and parts 0..k-1 are already a topological order of it.
struct Hypergraph {
  std::vector<double> vertex_weight;
  std::vector<HyperNet> nets;
  // Derived by finalize(): the nets each vertex is a pin of, and distinct DAG neighbours.
  std::vector<std::vector<int>> vertex_nets;
  std::vector<std::vector<int>> preds;
  std::vector<std::vector<int>> succs;

  int num_vertices() const { return static_cast<int>(vertex_weight.size()); }
  int num_nets() const { return static_cast<int>(nets.size()); }
  double total_weight() const;
  // Drops nets without sinks, sorts sinks and fills the derived fields. Throws if there is a cycle.
  void finalize();
};

// Vertices = profile nodes weighted by forward + backward ms at `vertex_batch` samples; nets =
// values with a producer and at least one consumer, weighted by bytes_per_sample x `net_batch`.
Hypergraph hypergraph_from_profile(const Profile& profile, double vertex_batch, double net_batch);

// Sum over nets of weight x (parts the net touches - 1).
double connectivity_cost(const Hypergraph& graph, const std::vector<int>& part, int k);
std::vector<double> part_loads(const Hypergraph& graph, const std::vector<int>& part, int k);
// part[source] <= part[sink] on every edge, every part in [0, k) and non-empty.
bool is_ordered_partition(const Hypergraph& graph, const std::vector<int>& part, int k);

// A topological order. `heavy_chain`: after each vertex prefer the ready vertex most strongly
// connected to it (sum of w/(|net|-1) over shared nets), so that heavily connected vertices sit
// side by side; ties (and, without heavy_chain, every choice) go to the smallest key in `keys`
// (empty: vertex index).
std::vector<int> topological_order(const Hypergraph& graph, bool heavy_chain, const std::vector<uint32_t>& keys);

// Whether a part's `load` fits `bound`, allowing for rounding in sums of weights.
inline bool within_bound(double load, double bound) { return load <= bound + 1e-12 * (1.0 + std::abs(bound)); }
// n random keys: tie-breakers for the randomised orders of coarsening and partitioning.
std::vector<uint32_t> random_keys(int n, std::mt19937& rng);

// One coarsening level: `graph` is the coarse graph, `fine_to_coarse` maps the finer level's vertices.
struct CoarseLevel {
  Hypergraph graph;
  std::vector<int> fine_to_coarse;
};
// Contracts `graph` (cluster[v] in [0, clusters)) into a coarse hypergraph; nets inside one cluster vanish.
Hypergraph contract(const Hypergraph& graph, const std::vector<int>& cluster, int clusters);
// Acyclic multilevel coarsening: each level orders the graph with a heavy-chain topological order and
// contracts disjoint pairs of consecutive, connected vertices (heaviest rating first) whose weight
// stays within `max_cluster_weight`. Clusters are intervals of a topological order, so every level
// is a DAG. Stops at `min_vertices` or when a level shrinks the graph by less than 5%.
std::vector<CoarseLevel> coarsen(const Hypergraph& graph, int min_vertices, double max_cluster_weight,
                                 std::mt19937& rng);

// The best split of `order` into k contiguous non-empty parts with every load <= bound, minimising
// connectivity - 1 exactly (skip nets counted once per part they reach); nullopt if no such split.
std::optional<std::vector<int>> best_ordered_split(const Hypergraph& graph, const std::vector<int>& order, int k,
                                                   double bound);
// The smallest achievable maximum part load over contiguous splits of `order` into k parts.
double min_max_split_load(const Hypergraph& graph, const std::vector<int>& order, int k);

// k-way Fiduccia-Mattheyses refinement of an ordered partition: moves single vertices to a part in
// [max part of predecessors, min part of successors] (so the partition stays ordered) that keeps
// every load <= bound and no part empty; passes roll back to their best prefix (lower
// connectivity - 1, then lower maximum load). Returns the connectivity - 1 reached.
double refine_partition(const Hypergraph& graph, std::vector<int>& part, int k, double bound, std::mt19937& rng,
                        int max_passes = 8);

}  // namespace baton::parallel
