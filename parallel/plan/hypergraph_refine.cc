// k-way Fiduccia-Mattheyses refinement of ordered (acyclic) partitions for connectivity - 1.
#include <algorithm>
#include <cmath>
#include <queue>

#include "parallel/plan/hypergraph.h"
#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

struct Move {
  double gain = 0;
  int target = -1;
  bool blocked = false;  // no target, but a part in range was too full (or v's part had one vertex)
};

// The state of one refinement: the partition, pins per (net, part), loads and sizes.
class Refiner {
 public:
  // Moves may fill a part up to `move_bound`; a pass keeps only prefixes that end within the real bound.
  Refiner(const Hypergraph& graph, std::vector<int>& part, int k, double move_bound)
      : g_(graph),
        part_(part),
        k_(k),
        bound_(move_bound),
        pins_(static_cast<size_t>(graph.num_nets()) * k, 0),
        loads_(k, 0.0),
        sizes_(k, 0) {
    for (int v = 0; v < g_.num_vertices(); ++v) {
      loads_[part_[v]] += g_.vertex_weight[v];
      ++sizes_[part_[v]];
    }
    for (int e = 0; e < g_.num_nets(); ++e) {
      ++pins(e, part_[g_.nets[e].source]);
      for (int s : g_.nets[e].sinks) ++pins(e, part_[s]);
    }
  }

  // The best move of v: to a part between its predecessors' and successors' parts, within move_bound,
  // not emptying its part; highest gain, then the lighter target.
  Move best_move(int v) const {
    const int a = part_[v];
    Move best;
    int lo = 0;
    int hi = k_ - 1;
    for (int u : g_.preds[v]) lo = std::max(lo, part_[u]);
    for (int u : g_.succs[v]) hi = std::min(hi, part_[u]);
    if (sizes_[a] <= 1) {
      best.blocked = lo < hi;
      return best;
    }
    const double w = g_.vertex_weight[v];
    double best_load = 0;
    for (int b = lo; b <= hi; ++b) {
      if (b == a) continue;
      if (!within_bound(loads_[b] + w, bound_)) {
        best.blocked = true;
        continue;
      }
      double gain = 0;
      for (int e : g_.vertex_nets[v]) {
        const double we = g_.nets[e].weight;
        if (pins(e, a) == 1) gain += we;
        if (pins(e, b) == 0) gain -= we;
      }
      if (best.target < 0 || gain > best.gain || (gain == best.gain && loads_[b] + w < best_load)) {
        best = {gain, b};
        best_load = loads_[b] + w;
      }
    }
    return best;
  }

  void apply(int v, int b) {
    const int a = part_[v];
    for (int e : g_.vertex_nets[v]) {
      --pins(e, a);
      ++pins(e, b);
    }
    loads_[a] -= g_.vertex_weight[v];
    loads_[b] += g_.vertex_weight[v];
    --sizes_[a];
    ++sizes_[b];
    part_[v] = b;
  }

  void set_move_bound(double move_bound) { bound_ = move_bound; }
  double max_load() const { return *std::max_element(loads_.begin(), loads_.end()); }
  int part(int v) const { return part_[v]; }

 private:
  int& pins(int e, int p) { return pins_[static_cast<size_t>(e) * k_ + p]; }
  int pins(int e, int p) const { return pins_[static_cast<size_t>(e) * k_ + p]; }

  const Hypergraph& g_;
  std::vector<int>& part_;
  int k_;
  double bound_;
  std::vector<int> pins_;
  std::vector<double> loads_;
  std::vector<int> sizes_;
};

}  // namespace

double refine_partition(const Hypergraph& graph, std::vector<int>& part, int k, double bound, std::mt19937& rng,
                        int max_passes) {
  BATON_CHECK(is_ordered_partition(graph, part, k), "refine_partition: the starting partition is not ordered");
  const int n = graph.num_vertices();
  if (k == 1 || n <= k) return connectivity_cost(graph, part, k);
  // Single moves cannot swap two vertices between two full parts. When strict passes stop improving,
  // a slack pass may overfill a part by up to the heaviest vertex (so a swap takes two moves); only
  // balanced prefixes are kept. Strict passes resume after a slack pass that improved.
  const double slack = *std::max_element(graph.vertex_weight.begin(), graph.vertex_weight.end());
  Refiner state(graph, part, k, bound);
  bool slack_pass = false;
  std::vector<uint32_t> keys(n);
  for (auto& key : keys) key = static_cast<uint32_t>(rng());
  struct Entry {
    double gain;
    uint32_t key;
    int vertex;
    int target;
    int version;
    bool operator<(const Entry& o) const { return gain != o.gain ? gain < o.gain : key > o.key; }
  };
  const int patience = std::max(50, n / 4);  // non-improving moves before a pass gives up
  std::vector<int> version(n, 0);
  std::vector<char> locked(n, 0);
  std::vector<int> neighbours;
  std::vector<int> seen(n, -1);
  int stamp = 0;
  for (int pass = 0; pass < max_passes; ++pass) {
    state.set_move_bound(slack_pass ? bound + slack : bound);
    std::fill(locked.begin(), locked.end(), 0);
    std::priority_queue<Entry> queue;
    // Vertices with no move only because a part is full (or theirs would empty): looked at again
    // after every move, since moves elsewhere change loads and sizes.
    std::vector<int> blocked;
    auto push = [&](int v) {
      const Move m = state.best_move(v);
      if (m.target >= 0) {
        queue.push({m.gain, keys[v], v, m.target, version[v]});
      } else if (m.blocked) {
        blocked.push_back(v);
      }
    };
    for (int v = 0; v < n; ++v) push(v);
    std::vector<std::pair<int, int>> log;  // (vertex, part it left)
    double cumulative = 0;
    double best_gain = 0;
    double best_max_load = state.max_load();
    size_t best_length = 0;
    int since_best = 0;
    while (!queue.empty() && since_best < patience) {
      const Entry top = queue.top();
      queue.pop();
      const int v = top.vertex;
      if (locked[v] || top.version != version[v]) continue;
      const Move m = state.best_move(v);  // loads elsewhere may have changed since the push
      if (m.target < 0) {
        if (m.blocked) blocked.push_back(v);
        continue;
      }
      if (m.gain < top.gain || m.target != top.target) {
        queue.push({m.gain, keys[v], v, m.target, ++version[v]});
        continue;
      }
      log.emplace_back(v, state.part(v));
      state.apply(v, m.target);
      locked[v] = 1;
      cumulative += m.gain;
      const double max_load = state.max_load();
      const double eps = 1e-9 * (1.0 + std::abs(cumulative));
      const bool balanced = within_bound(max_load, bound);
      if (balanced && (cumulative > best_gain + eps || (cumulative >= best_gain - eps && max_load < best_max_load))) {
        best_gain = cumulative;
        best_max_load = max_load;
        best_length = log.size();
        since_best = 0;
      } else {
        ++since_best;
      }
      // Pins of v's nets and its DAG neighbours: their gains or allowed parts changed.
      neighbours.clear();
      ++stamp;
      auto note = [&](int u) {
        if (!locked[u] && seen[u] != stamp) {
          seen[u] = stamp;
          neighbours.push_back(u);
        }
      };
      for (int e : graph.vertex_nets[v]) {
        note(graph.nets[e].source);
        for (int s : graph.nets[e].sinks) note(s);
      }
      for (int u : graph.preds[v]) note(u);
      for (int u : graph.succs[v]) note(u);
      for (int u : neighbours) {
        ++version[u];
        push(u);
      }
      std::vector<int> still_blocked;
      for (int u : blocked) {
        if (locked[u] || seen[u] == stamp) continue;  // neighbours were just pushed again
        seen[u] = stamp;
        const Move b = state.best_move(u);
        if (b.target >= 0) {
          queue.push({b.gain, keys[u], u, b.target, ++version[u]});
        } else if (b.blocked) {
          still_blocked.push_back(u);
        }
      }
      blocked.swap(still_blocked);
    }
    while (log.size() > best_length) {
      state.apply(log.back().first, log.back().second);
      log.pop_back();
    }
    if (best_length > 0) {
      slack_pass = false;
    } else if (!slack_pass && slack > 0) {
      slack_pass = true;
    } else {
      break;
    }
  }
  return connectivity_cost(graph, part, k);
}

}  // namespace baton::parallel
