// ParamStore: the parameters of a set of nodes (a whole graph, or one pipeline stage) in one flat
// buffer and their gradients in another, each parameter a named view ("layer1.0.conv1.weight").
// Parameters with weight decay come first, those without (biases, BatchNorm) after, so an optimiser
// covers each group with one fused call. Each parameter starts 64-byte aligned; the padding between
// them is zero and stays zero under every optimiser. Buffers (BatchNorm running statistics) are
// separate named tensors.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/graph/graph.h"

namespace baton {

struct ParamEntry {
  std::string name;  // "<node name>.<spec name>"
  NodeId node = -1;
  int index = 0;  // position among the node's parameters
  Shape shape;
  Initializer init;
  bool weight_decay = true;
  int64_t offset = 0;  // element offset in the flat buffers
};

struct BufferEntry {
  std::string name;
  NodeId node = -1;
  int index = 0;
  TensorSpec spec;
};

class ParamStore {
 public:
  // Parameters and buffers of `nodes` (graph node ids) in element type `dtype` on ctx's device.
  // The memory is uninitialised until initialize() or a checkpoint load.
  ParamStore(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype, Context& ctx);

  DType dtype() const { return dtype_; }
  Device device() const { return params_.device(); }
  const std::vector<ParamEntry>& params() const { return entries_; }
  const std::vector<BufferEntry>& buffers() const { return buffer_entries_; }
  // Parameter elements, padding excluded.
  int64_t num_parameters() const;

  const Tensor& params_flat() const { return params_; }
  const Tensor& grads_flat() const { return grads_; }
  // Element range [begin, end) of the flat buffers holding the parameters with / without weight decay.
  int64_t decay_end() const { return decay_end_; }

  // Views by name; throws naming the parameter when absent.
  Tensor param(const std::string& name) const;
  Tensor grad(const std::string& name) const;
  Tensor buffer(const std::string& name) const;
  const ParamEntry& entry(const std::string& name) const;

  // The node's parameters, gradients and buffers, in the order of its layer's specs (empty spans
  // for nodes without any, or not in this store).
  std::span<const Tensor> node_params(NodeId node) const;
  std::span<const Tensor> node_grads(NodeId node) const;
  std::span<const Tensor> node_buffers(NodeId node) const;

  // Draws every parameter from its initialiser with Philox(seed), parameter p using stream offset
  // p.offset: the same values on every device. Buffers take their constant initial values.
  void initialize(Context& ctx, uint64_t seed);
  void zero_grads(Context& ctx);

 private:
  struct NodeViews {
    std::vector<Tensor> params, grads, buffers;
  };

  DType dtype_;
  Tensor params_, grads_;
  int64_t decay_end_ = 0;
  std::vector<ParamEntry> entries_;
  std::vector<BufferEntry> buffer_entries_;
  std::vector<Tensor> buffer_tensors_;
  std::unordered_map<std::string, size_t> by_name_, buffer_by_name_;
  std::unordered_map<NodeId, NodeViews> node_views_;
};

}  // namespace baton
