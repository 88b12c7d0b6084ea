// A PipeDream graph as a baton Profile, and a baton Profile as the graph PipeDream's optimiser would see.
#include <algorithm>
#include <cmath>

#include "parallel/plan/pipedream_graph.h"
#include "runtime/core/error.h"

namespace baton::parallel {

Profile pipedream_profile(const PipeDreamGraph& graph, int batch) {
  BATON_CHECK(batch > 0, graph.source, ": the mini-batch the profile was measured at must be positive, got ", batch);
  Profile p;
  p.model = graph.source;
  p.device = "PipeDream's profiling device";
  p.source = "pipedream:" + graph.source;
  p.batch_sizes = {batch};
  const int n = static_cast<int>(graph.nodes.size());
  ProfiledValue input;
  input.name = "input";
  for (int consumer : graph.input_consumers) input.consumers.push_back(consumer);
  std::sort(input.consumers.begin(), input.consumers.end());
  if (!input.consumers.empty()) p.values.push_back(input);
  for (int i = 0; i < n; ++i) {
    const PipeDreamNode& node = graph.nodes[static_cast<size_t>(i)];
    ProfiledNode out;
    out.name = node.id;
    out.type = node.description.substr(0, node.description.find('('));
    out.fwd_ms = {node.forward_ms};
    out.bwd_ms = {node.backward_ms};
    out.param_bytes = static_cast<int64_t>(std::llround(node.parameter_bytes));
    out.outputs = {static_cast<int>(p.values.size())};
    ProfiledValue value;
    value.name = node.id;
    value.producer = i;
    value.consumers = node.consumers;
    std::sort(value.consumers.begin(), value.consumers.end());
    value.consumers.erase(std::unique(value.consumers.begin(), value.consumers.end()), value.consumers.end());
    value.bytes_per_sample = static_cast<int64_t>(std::llround(node.activation_bytes / batch));
    value.graph_output = value.consumers.empty();
    p.values.push_back(value);
    p.nodes.push_back(out);
  }
  for (size_t v = 0; v < p.values.size(); ++v) {
    for (int consumer : p.values[v].consumers)
      p.nodes[static_cast<size_t>(consumer)].inputs.push_back(static_cast<int>(v));
  }
  p.validate(p.source);
  return p;
}

PipeDreamGraph pipedream_graph_of(const Profile& profile, int batch) {
  BATON_CHECK(batch > 0, profile.source, ": the mini-batch must be positive, got ", batch);
  PipeDreamGraph graph;
  graph.source = profile.model;
  for (int n = 0; n < profile.num_nodes(); ++n) {
    const ProfiledNode& node = profile.nodes[static_cast<size_t>(n)];
    PipeDreamNode out;
    out.id = node.name;
    out.description = node.type;
    out.forward_ms = profile.fwd_ms(n, batch);
    out.backward_ms = profile.bwd_ms(n, batch);
    for (int v : node.outputs) {
      out.activation_bytes += static_cast<double>(profile.values[static_cast<size_t>(v)].bytes_per_sample) * batch;
    }
    out.parameter_bytes = static_cast<double>(node.param_bytes);
    graph.nodes.push_back(out);
  }
  for (const ProfiledValue& value : profile.values) {
    for (int consumer : value.consumers) {
      if (value.producer < 0) {
        if (std::find(graph.input_consumers.begin(), graph.input_consumers.end(), consumer) ==
            graph.input_consumers.end()) {
          graph.input_consumers.push_back(consumer);
        }
        continue;
      }
      std::vector<int>& consumers = graph.nodes[static_cast<size_t>(value.producer)].consumers;
      if (std::find(consumers.begin(), consumers.end(), consumer) != consumers.end()) continue;
      consumers.push_back(consumer);
      graph.nodes[static_cast<size_t>(consumer)].producers.push_back(value.producer);
    }
  }
  return graph;
}

}  // namespace baton::parallel
