// ParamStore: the parameters of a set of nodes (a whole graph, or one pipeline stage) in one flat
// buffer and their gradients in another, each parameter a named view ("layer1.0.conv1.weight").
// By default parameters with weight decay come first, those without (biases, BatchNorm) after, so
// an optimiser covers each group with one fused call. A ParamLayout lays them out in blocks instead
// (data parallelism: one block per gradient bucket, so that a bucket is one contiguous range); each
// block holds its weight-decay parameters first, and the optimiser runs once per segment (a maximal
// run of one weight-decay setting). Each parameter starts 64-byte aligned; the padding between them
// is zero and stays zero under every optimiser. Initial values do not depend on the layout. Buffers
// (BatchNorm running statistics) are separate named tensors.
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
  // Element offset in the default layout: the Philox stream offset of the initial values, so that
  // every layout draws the same values.
  int64_t init_offset = 0;
};

// The parameters in blocks of names, laid out block by block; empty: the default layout.
struct ParamLayout {
  std::vector<std::vector<std::string>> blocks;
};

// A range [begin, end) of the flat buffers whose parameters share one weight-decay setting.
struct ParamSegment {
  int64_t begin = 0, end = 0;
  bool weight_decay = true;
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
  // With a `layout`, every parameter of `nodes` must be in exactly one block (an error names the
  // first missing, repeated or unknown name).
  ParamStore(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype, Context& ctx,
             const ParamLayout& layout = {});

  // The parameters of `nodes` in the default layout (names, shapes, offsets), without allocating.
  static std::vector<ParamEntry> describe(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype);

  DType dtype() const { return dtype_; }
  Device device() const { return params_.device(); }
  const std::vector<ParamEntry>& params() const { return entries_; }
  const std::vector<BufferEntry>& buffers() const { return buffer_entries_; }
  // Parameter elements, padding excluded.
  int64_t num_parameters() const;

  const Tensor& params_flat() const { return params_; }
  const Tensor& grads_flat() const { return grads_; }
  // The flat buffers as runs of one weight-decay setting, in order (padding included), covering them.
  const std::vector<ParamSegment>& segments() const { return segments_; }
  // Element range [begin, end) of each layout block (the default layout: one block of everything).
  const std::vector<std::pair<int64_t, int64_t>>& block_ranges() const { return block_ranges_; }

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
  std::vector<ParamSegment> segments_;
  std::vector<std::pair<int64_t, int64_t>> block_ranges_;
  std::vector<ParamEntry> entries_;
  std::vector<BufferEntry> buffer_entries_;
  std::vector<Tensor> buffer_tensors_;
  std::unordered_map<std::string, size_t> by_name_, buffer_by_name_;
  std::unordered_map<NodeId, NodeViews> node_views_;
};

}  // namespace baton
