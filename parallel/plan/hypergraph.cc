// The directed hypergraph of a profile: construction, contraction, connectivity and topological orders.
#include "parallel/plan/hypergraph.h"

#include <algorithm>
#include <numeric>
#include <queue>

#include "runtime/core/error.h"

namespace baton::parallel {

double Hypergraph::total_weight() const { return std::accumulate(vertex_weight.begin(), vertex_weight.end(), 0.0); }

void Hypergraph::finalize() {
  const int n = num_vertices();
  std::erase_if(nets, [](const HyperNet& net) { return net.sinks.empty(); });
  vertex_nets.assign(n, {});
  preds.assign(n, {});
  succs.assign(n, {});
  for (int e = 0; e < num_nets(); ++e) {
    HyperNet& net = nets[e];
    BATON_CHECK(net.source >= 0 && net.source < n, "hypergraph: net ", e, " has source ", net.source, " outside [0, ",
                n, ")");
    std::sort(net.sinks.begin(), net.sinks.end());
    net.sinks.erase(std::unique(net.sinks.begin(), net.sinks.end()), net.sinks.end());
    vertex_nets[net.source].push_back(e);
    for (int s : net.sinks) {
      BATON_CHECK(s >= 0 && s < n && s != net.source, "hypergraph: net ", e, " has bad sink ", s);
      vertex_nets[s].push_back(e);
      succs[net.source].push_back(s);
      preds[s].push_back(net.source);
    }
  }
  for (int v = 0; v < n; ++v) {
    for (auto* list : {&preds[v], &succs[v]}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
  }
  // Kahn's algorithm: every vertex must be reached, or there is a cycle.
  std::vector<int> indegree(n);
  for (int v = 0; v < n; ++v) indegree[v] = static_cast<int>(preds[v].size());
  std::vector<int> ready;
  for (int v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push_back(v);
  }
  int seen = 0;
  while (!ready.empty()) {
    const int v = ready.back();
    ready.pop_back();
    ++seen;
    for (int s : succs[v]) {
      if (--indegree[s] == 0) ready.push_back(s);
    }
  }
  BATON_CHECK(seen == n, "hypergraph: the graph has a cycle (", n - seen, " vertices on or after it)");
}

Hypergraph hypergraph_from_profile(const Profile& profile, double vertex_batch, double net_batch) {
  Hypergraph graph;
  const int n = profile.num_nodes();
  graph.vertex_weight.resize(n);
  for (int v = 0; v < n; ++v) {
    graph.vertex_weight[v] = profile.fwd_ms(v, vertex_batch) + profile.bwd_ms(v, vertex_batch);
  }
  for (const ProfiledValue& value : profile.values) {
    if (value.producer < 0 || value.consumers.empty()) continue;  // graph inputs: the loader delivers them
    HyperNet net;
    net.source = value.producer;
    for (int c : value.consumers) {
      if (c != value.producer) net.sinks.push_back(c);
    }
    net.weight = static_cast<double>(value.bytes_per_sample) * net_batch;
    graph.nets.push_back(std::move(net));
  }
  graph.finalize();
  return graph;
}

double connectivity_cost(const Hypergraph& graph, const std::vector<int>& part, int k) {
  std::vector<int> seen(k, -1);
  double cost = 0;
  for (int e = 0; e < graph.num_nets(); ++e) {
    const HyperNet& net = graph.nets[e];
    seen[part[net.source]] = e;
    int parts = 1;
    for (int s : net.sinks) {
      if (seen[part[s]] != e) {
        seen[part[s]] = e;
        ++parts;
      }
    }
    cost += net.weight * (parts - 1);
  }
  return cost;
}

std::vector<double> part_loads(const Hypergraph& graph, const std::vector<int>& part, int k) {
  std::vector<double> loads(k, 0.0);
  for (int v = 0; v < graph.num_vertices(); ++v) loads[part[v]] += graph.vertex_weight[v];
  return loads;
}

bool is_ordered_partition(const Hypergraph& graph, const std::vector<int>& part, int k) {
  if (static_cast<int>(part.size()) != graph.num_vertices()) return false;
  std::vector<int> sizes(k, 0);
  for (int p : part) {
    if (p < 0 || p >= k) return false;
    ++sizes[p];
  }
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return false;
  for (const HyperNet& net : graph.nets) {
    for (int s : net.sinks) {
      if (part[s] < part[net.source]) return false;
    }
  }
  return true;
}

std::vector<int> topological_order(const Hypergraph& graph, bool heavy_chain, const std::vector<uint32_t>& keys) {
  const int n = graph.num_vertices();
  auto key = [&](int v) { return keys.empty() ? static_cast<uint32_t>(v) : keys[v]; };
  std::vector<int> indegree(n);
  for (int v = 0; v < n; ++v) indegree[v] = static_cast<int>(graph.preds[v].size());
  // Ready vertices by key; heavy_chain picks from them by connection to the last vertex first.
  auto later = [&](int a, int b) { return key(a) != key(b) ? key(a) > key(b) : a > b; };
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  std::vector<char> placed(n, 0);
  std::vector<double> connection(n, 0.0);
  std::vector<int> touched;
  for (int v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push(v);
  }
  std::vector<int> order;
  order.reserve(n);
  std::vector<char> is_ready(n, 0);
  for (int v = 0; v < n; ++v) is_ready[v] = indegree[v] == 0;
  int last = -1;
  while (static_cast<int>(order.size()) < n) {
    int next = -1;
    if (heavy_chain && last >= 0) {
      double best = 0;
      for (int v : touched) {
        if (!is_ready[v] || placed[v]) continue;
        if (connection[v] > best || (connection[v] == best && next >= 0 && later(next, v))) {
          best = connection[v];
          next = v;
        }
      }
    }
    for (int v : touched) connection[v] = 0;
    touched.clear();
    if (next < 0) {
      while (placed[ready.top()]) ready.pop();  // entries taken by the heavy-chain rule
      next = ready.top();
      ready.pop();
    }
    placed[next] = 1;
    order.push_back(next);
    last = next;
    for (int s : graph.succs[next]) {
      if (--indegree[s] == 0) {
        is_ready[s] = 1;
        ready.push(s);
      }
    }
    if (heavy_chain) {
      for (int e : graph.vertex_nets[next]) {
        const HyperNet& net = graph.nets[e];
        const double rating = net.weight / static_cast<double>(net.sinks.size());  // w / (|e| - 1)
        auto add = [&](int v) {
          if (v == next || placed[v]) return;
          if (connection[v] == 0) touched.push_back(v);
          connection[v] += rating;
        };
        add(net.source);
        for (int s : net.sinks) add(s);
      }
    }
  }
  return order;
}

Hypergraph contract(const Hypergraph& graph, const std::vector<int>& cluster, int clusters) {
  Hypergraph coarse;
  coarse.vertex_weight.assign(clusters, 0.0);
  for (int v = 0; v < graph.num_vertices(); ++v) coarse.vertex_weight[cluster[v]] += graph.vertex_weight[v];
  for (const HyperNet& net : graph.nets) {
    HyperNet c;
    c.source = cluster[net.source];
    c.weight = net.weight;
    for (int s : net.sinks) {
      if (cluster[s] != c.source) c.sinks.push_back(cluster[s]);
    }
    if (!c.sinks.empty()) coarse.nets.push_back(std::move(c));
  }
  coarse.finalize();  // dedupes sinks; throws if a contraction made a cycle
  return coarse;
}

}  // namespace baton::parallel
