// Profile structure from a graph and analytic times from a device description.
#include "parallel/plan/analytic_profile.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

std::vector<Shape> input_shapes(const Graph& g, const Node& node, int64_t batch) {
  std::vector<Shape> shapes;
  for (ValueId v : node.inputs) {
    std::vector<int64_t> dims(g.value(v).shape.dims().begin(), g.value(v).shape.dims().end());
    if (!dims.empty()) dims[0] = batch;
    shapes.emplace_back(dims);
  }
  return shapes;
}

int64_t per_sample_bytes(const ValueInfo& v) {
  const Shape& s = v.shape;
  int64_t n = 1;
  for (size_t d = 1; d < s.dims().size(); ++d) n *= s.dims()[d];
  if (s.dims().empty()) n = 0;  // a scalar (the loss) is not per sample
  return n * static_cast<int64_t>(dtype_size(v.dtype));
}

LayerCost cost_at(const Graph& g, const Node& node, int64_t batch) {
  return node.layer->cost(input_shapes(g, node, batch), g.value(node.inputs[0]).dtype);
}

}  // namespace

OptimizerTraffic optimizer_traffic(const std::string& optimizer) {
  if (optimizer == "sgd") return {1, 5};
  if (optimizer == "adamw") return {2, 7};
  BATON_FAIL("unknown optimizer '", optimizer, "' (expected sgd or adamw)");
}

Profile profile_structure(const Graph& g, const std::string& model) {
  Profile p;
  p.model = model;
  const std::vector<NodeId> order = g.topological_order();
  std::unordered_map<NodeId, int> index;
  for (size_t i = 0; i < order.size(); ++i) index[order[i]] = static_cast<int>(i);
  for (ValueId v = 0; v < g.num_values(); ++v) {
    const ValueInfo& info = g.value(v);
    ProfiledValue pv;
    pv.name = info.name;
    pv.producer = info.producer < 0 ? -1 : index.at(info.producer);
    for (NodeId c : info.consumers) pv.consumers.push_back(index.at(c));
    std::sort(pv.consumers.begin(), pv.consumers.end());
    pv.bytes_per_sample = per_sample_bytes(info);
    pv.graph_output = std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
    p.values.push_back(std::move(pv));
  }
  const int64_t nominal = 64;  // bytes per sample from a batch large enough to average fixed sizes out
  for (NodeId id : order) {
    const Node& node = g.node(id);
    ProfiledNode pn;
    pn.name = node.name;
    pn.type = std::string(node.layer->type());
    pn.inputs.assign(node.inputs.begin(), node.inputs.end());
    pn.outputs.assign(node.outputs.begin(), node.outputs.end());
    const LayerCost cost = cost_at(g, node, nominal);
    pn.param_bytes = cost.param_bytes;
    pn.saved_bytes_per_sample = cost.saved_bytes / nominal;
    pn.workspace_bytes = cost.workspace_bytes;
    pn.forward_macs_per_sample = cost.forward_macs / nominal;
    p.nodes.push_back(std::move(pn));
  }
  return p;
}

Profile analytic_profile(const Graph& g, const std::string& model, const DeviceSpec& device,
                         const AnalyticOptions& options) {
  BATON_CHECK(!options.batch_sizes.empty(), "analytic profile: no batch sizes");
  Profile p = profile_structure(g, model);
  p.device = device.name;
  p.source = "analytic";
  p.batch_sizes = options.batch_sizes;
  std::sort(p.batch_sizes.begin(), p.batch_sizes.end());
  p.batch_sizes.erase(std::unique(p.batch_sizes.begin(), p.batch_sizes.end()), p.batch_sizes.end());
  const OptimizerTraffic traffic = optimizer_traffic(options.optimizer);
  const double bandwidth = device.memory_bandwidth_gbs * 1e9 * device.memory_efficiency;  // bytes/s
  p.optimizer_state_factor = traffic.state_factor;
  p.optimizer_ms_per_param_byte = traffic.bytes_per_byte / bandwidth * 1e3;
  const std::vector<NodeId> order = g.topological_order();
  const double overhead_ms = device.launch_overhead_us * 1e-3;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& node = g.node(order[i]);
    const std::string dtype(dtype_name(g.value(node.inputs[0]).dtype));
    const double flops_per_s = peak_flops(device, dtype, options.allow_tf32) * device.compute_efficiency;
    ProfiledNode& pn = p.nodes[i];
    for (int b : p.batch_sizes) {
      const LayerCost cost = cost_at(g, node, b);
      double input_bytes = 0;
      for (const Shape& s : input_shapes(g, node, b)) input_bytes += static_cast<double>(s.numel());
      input_bytes *= static_cast<double>(dtype_size(g.value(node.inputs[0]).dtype));
      const double act = input_bytes + static_cast<double>(cost.output_bytes);
      const double params = static_cast<double>(cost.param_bytes);
      const double fwd_s = std::max(cost.forward_flops / flops_per_s, (act + params) / bandwidth);
      const double bwd_s = std::max(cost.backward_flops / flops_per_s, (2 * act + 2 * params) / bandwidth);
      pn.fwd_ms.push_back(overhead_ms + fwd_s * 1e3);
      pn.bwd_ms.push_back(2 * overhead_ms + bwd_s * 1e3);
    }
  }
  p.validate("analytic profile of " + model);
  return p;
}

}  // namespace baton::parallel
