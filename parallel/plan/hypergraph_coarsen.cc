// Acyclic coarsening of the hypergraph and exact best splits of a topological order into k parts.
#include <algorithm>
#include <cmath>
#include <limits>

#include "parallel/plan/hypergraph.h"
#include "runtime/core/error.h"

namespace baton::parallel {
std::vector<uint32_t> random_keys(int n, std::mt19937& rng) {
  std::vector<uint32_t> keys(n);
  for (auto& key : keys) key = static_cast<uint32_t>(rng());
  return keys;
}

std::vector<CoarseLevel> coarsen(const Hypergraph& graph, int min_vertices, double max_cluster_weight,
                                 std::mt19937& rng) {
  std::vector<CoarseLevel> levels;
  const Hypergraph* current = &graph;
  std::vector<int> stamp;
  std::vector<double> rating_of;
  while (current->num_vertices() > min_vertices) {
    const Hypergraph& g = *current;
    const int n = g.num_vertices();
    const std::vector<int> order = topological_order(g, /*heavy_chain=*/true, random_keys(n, rng));
    const std::vector<uint32_t> tie = random_keys(n, rng);
    // Rate each pair of consecutive vertices by the nets they share (sum of w / (|net| - 1)).
    struct Candidate {
      double rating;
      double weight;
      uint32_t key;
      int position;  // pairs order[position], order[position + 1]
    };
    std::vector<Candidate> candidates;
    stamp.assign(g.num_nets(), -1);
    for (int i = 0; i + 1 < n; ++i) {
      const int x = order[i];
      const int y = order[i + 1];
      const double weight = g.vertex_weight[x] + g.vertex_weight[y];
      if (weight > max_cluster_weight) continue;
      for (int e : g.vertex_nets[x]) stamp[e] = i;
      double rating = 0;
      for (int e : g.vertex_nets[y]) {
        if (stamp[e] == i) rating += g.nets[e].weight / static_cast<double>(g.nets[e].sinks.size());
      }
      if (rating > 0) candidates.push_back({rating, weight, tie[i], i});
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      if (a.rating != b.rating) return a.rating > b.rating;
      if (a.weight != b.weight) return a.weight < b.weight;
      return a.key != b.key ? a.key < b.key : a.position < b.position;
    });
    std::vector<char> merged_with_next(n, 0);
    std::vector<char> taken(n, 0);
    int remaining = n;
    for (const Candidate& c : candidates) {
      if (remaining <= min_vertices) break;
      if (taken[c.position] || taken[c.position + 1]) continue;
      taken[c.position] = taken[c.position + 1] = 1;
      merged_with_next[c.position] = 1;
      --remaining;
    }
    if (remaining == n) break;
    // Cluster ids follow the order, so the coarse vertices' index order is a topological order.
    CoarseLevel level;
    level.fine_to_coarse.assign(n, -1);
    int clusters = 0;
    for (int i = 0; i < n; ++i) {
      level.fine_to_coarse[order[i]] = clusters;
      if (!merged_with_next[i]) ++clusters;
    }
    level.graph = contract(g, level.fine_to_coarse, clusters);
    levels.push_back(std::move(level));
    current = &levels.back().graph;
    if (remaining > n - n / 20) break;  // shrank by less than 5%: stop here
  }
  return levels;
}

std::optional<std::vector<int>> best_ordered_split(const Hypergraph& graph, const std::vector<int>& order, int k,
                                                   double bound) {
  const int n = graph.num_vertices();
  BATON_CHECK(static_cast<int>(order.size()) == n && k >= 1, "best_ordered_split: bad order or k");
  if (k > n) return std::nullopt;
  std::vector<int> pos(n);
  std::vector<double> prefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i) {
    pos[order[i]] = i;
    prefix[i + 1] = prefix[i] + graph.vertex_weight[order[i]];
  }
  // Nets by source position, each with its sink positions ascending.
  struct PosNet {
    int source;
    std::vector<int> sinks;
    double weight;
  };
  std::vector<PosNet> nets;
  nets.reserve(graph.num_nets());
  for (const HyperNet& net : graph.nets) {
    PosNet p{pos[net.source], {}, net.weight};
    for (int s : net.sinks) p.sinks.push_back(pos[s]);
    std::sort(p.sinks.begin(), p.sinks.end());
    nets.push_back(std::move(p));
  }
  std::sort(nets.begin(), nets.end(), [](const PosNet& a, const PosNet& b) { return a.source < b.source; });

  // dp[p][j]: first j vertices of the order in p parts; (cost, max load), parent start.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  struct Cell {
    double cost = kInf;
    double max_load = kInf;
    int from = -1;
  };
  std::vector<std::vector<Cell>> dp(k + 1, std::vector<Cell>(n + 1));
  dp[0][0] = {0.0, 0.0, -1};
  std::vector<double> entering(n + 2);
  for (int i = 0; i < n; ++i) {  // a part starting at position i
    bool reachable = false;
    for (int p = 0; p < k; ++p) reachable = reachable || dp[p][i].cost < kInf;
    if (!reachable) continue;
    // The bytes entering part [i, j): nets produced before i with a sink at or after i, counted
    // from the first such sink on.
    std::fill(entering.begin(), entering.end(), 0.0);
    for (const PosNet& net : nets) {
      if (net.source >= i) break;
      auto first = std::lower_bound(net.sinks.begin(), net.sinks.end(), i);
      if (first != net.sinks.end()) entering[*first + 1] += net.weight;
    }
    double cost = 0;
    for (int j = i + 1; j <= n; ++j) {
      cost += entering[j];
      const double load = prefix[j] - prefix[i];
      if (!within_bound(load, bound)) break;
      for (int p = 0; p < k; ++p) {
        const Cell& prev = dp[p][i];
        if (prev.cost == kInf) continue;
        const double c = prev.cost + cost;
        const double m = std::max(prev.max_load, load);
        Cell& cell = dp[p + 1][j];
        const double eps = 1e-9 * (1.0 + std::abs(c));
        if (c < cell.cost - eps || (c <= cell.cost + eps && m < cell.max_load)) cell = {c, m, i};
      }
    }
  }
  if (dp[k][n].cost == kInf) return std::nullopt;
  std::vector<int> part(n);
  int j = n;
  for (int p = k; p >= 1; --p) {
    const int i = dp[p][j].from;
    for (int t = i; t < j; ++t) part[order[t]] = p - 1;
    j = i;
  }
  return part;
}

double min_max_split_load(const Hypergraph& graph, const std::vector<int>& order, int k) {
  const int n = graph.num_vertices();
  BATON_CHECK(k >= 1 && k <= n, "min_max_split_load: k = ", k, " for ", n, " vertices");
  std::vector<double> prefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + graph.vertex_weight[order[i]];
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> prev(n + 1, kInf);
  std::vector<double> next(n + 1, kInf);
  prev[0] = 0;
  for (int p = 1; p <= k; ++p) {
    std::fill(next.begin(), next.end(), kInf);
    for (int j = p; j <= n; ++j) {
      for (int i = p - 1; i < j; ++i) {
        if (prev[i] == kInf) continue;
        next[j] = std::min(next[j], std::max(prev[i], prefix[j] - prefix[i]));
      }
    }
    std::swap(prev, next);
  }
  return prev[n];
}

}  // namespace baton::parallel
