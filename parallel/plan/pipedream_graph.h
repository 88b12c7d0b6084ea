// PipeDream's profiles (`graph.txt`, msr-fiddle/pipedream's profiler output): a node per layer with its
// forward and backward milliseconds, output activation bytes and parameter bytes for the whole
// mini-batch, and the edges between them. Read into a graph, and from it into a baton Profile.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/plan/profile.h"

namespace baton::parallel {

struct PipeDreamNode {
  std::string id;           // "node12"
  std::string description;  // "Conv2d(128, 256, kernel_size=(3, 3), ...)"
  double forward_ms = 0, backward_ms = 0;
  double activation_bytes = 0;  // the node's output, for the whole mini-batch
  double parameter_bytes = 0;
  std::vector<int> consumers;  // node indices, in the file's order of edges
  std::vector<int> producers;
};

// The nodes the optimiser sees: PipeDream's `Input` sources and `__getitem__` sinks are dropped, as
// its optimiser does (their edges go with them). Nodes are in a topological order (ties: the
// number in the node's id, then the id), so that node indices are also a baton Profile's.
struct PipeDreamGraph {
  std::string source;  // the file read
  std::vector<PipeDreamNode> nodes;
  // The dropped `Input` nodes' consumers: they read the graph's input.
  std::vector<int> input_consumers;
};

// Reads a graph.txt: node lines `id -- description -- forward_compute_time=F, backward_compute_time=B,
// activation_size=A, parameter_size=P[ -- stage_id=S]` (A may be a list `[a; b]`, summed) and edge lines
// `<tab>id -- id`. Errors name the file, the line and what was expected; a cycle, an edge to an unknown
// node or a repeated node id is an error.
PipeDreamGraph read_pipedream_graph(const std::string& path);
PipeDreamGraph parse_pipedream_graph(std::string_view text, std::string_view source);

// A baton Profile of the graph measured at mini-batch `batch`: one batch size, each node's times, its
// output as one value of activation_bytes / batch bytes per sample, its parameters; `source`
// "pipedream:<file>".
Profile pipedream_profile(const PipeDreamGraph& graph, int batch);
// The other way: a baton profile at mini-batch `batch` as PipeDream's optimiser would see it (times at
// that batch, each node's outputs' bytes times the batch, parameter bytes).
PipeDreamGraph pipedream_graph_of(const Profile& profile, int batch);

}  // namespace baton::parallel
