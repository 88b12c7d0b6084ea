// ParamStore: laying parameters, gradients and buffers of a node set out in flat buffers, named
// views into them, and seeded initialisation.
#include "runtime/graph/param_store.h"

#include <unordered_map>

#include "kernels/random.h"
#include "runtime/core/error.h"
#include "runtime/graph/precision.h"

namespace baton {
namespace {

std::vector<Shape> input_shapes(const Graph& g, const Node& node) {
  std::vector<Shape> shapes;
  for (ValueId v : node.inputs) shapes.push_back(g.value(v).shape);
  return shapes;
}

Tensor flat_view(const Tensor& flat, const ParamEntry& e) {
  return flat.slice(e.offset, e.offset + e.shape.numel()).reshape(e.shape);
}

int64_t padded(int64_t numel, DType dtype) {
  const auto align = static_cast<int64_t>(64 / dtype_size(dtype));
  return (numel + align - 1) / align * align;
}

// The entries laid out block by block, each block's weight-decay parameters first; returns the end.
int64_t lay_out_blocks(std::vector<ParamEntry>& entries, const ParamLayout& layout, DType dtype,
                       std::vector<std::pair<int64_t, int64_t>>& block_ranges) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < entries.size(); ++i) index.emplace(entries[i].name, i);
  std::vector<ParamEntry> ordered;
  std::vector<bool> placed(entries.size(), false);
  int64_t offset = 0;
  for (size_t b = 0; b < layout.blocks.size(); ++b) {
    const int64_t begin = offset;
    for (bool decay : {true, false}) {
      for (const std::string& name : layout.blocks[b]) {
        const auto it = index.find(name);
        BATON_CHECK(it != index.end(), "ParamStore layout: block ", b, " names '", name,
                    "', which is not a parameter of these nodes");
        if (entries[it->second].weight_decay != decay) continue;
        BATON_CHECK(!placed[it->second], "ParamStore layout: parameter '", name, "' is in more than one block");
        placed[it->second] = true;
        ParamEntry e = entries[it->second];
        e.offset = offset;
        offset += padded(e.shape.numel(), dtype);
        ordered.push_back(std::move(e));
      }
    }
    block_ranges.emplace_back(begin, offset);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    BATON_CHECK(placed[i], "ParamStore layout: parameter '", entries[i].name, "' is in no block");
  }
  entries = std::move(ordered);
  return offset;
}

std::vector<ParamSegment> segments_of(const std::vector<ParamEntry>& entries, int64_t end) {
  std::vector<ParamSegment> out;
  for (const ParamEntry& e : entries) {
    if (!out.empty() && out.back().weight_decay == e.weight_decay) continue;
    if (!out.empty()) out.back().end = e.offset;
    out.push_back({e.offset, end, e.weight_decay});
  }
  return out;
}

}  // namespace

std::vector<ParamEntry> ParamStore::describe(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype) {
  check_master_dtype(dtype, "ParamStore");
  // Two passes: parameters with weight decay, then those without.
  std::vector<ParamEntry> entries;
  std::unordered_map<std::string, size_t> by_name;
  int64_t offset = 0;
  for (bool decay : {true, false}) {
    for (NodeId n : nodes) {
      const Node& node = graph.node(n);
      const std::vector<TensorSpec> specs = node.layer->param_specs(input_shapes(graph, node));
      for (size_t i = 0; i < specs.size(); ++i) {
        if (specs[i].weight_decay != decay) continue;
        ParamEntry e{node.name + "." + specs[i].name,
                     n,
                     static_cast<int>(i),
                     specs[i].shape,
                     specs[i].init,
                     decay,
                     offset,
                     offset};
        offset += padded(specs[i].shape.numel(), dtype);
        BATON_CHECK(!by_name.contains(e.name), "duplicate parameter name '", e.name, "'");
        by_name.emplace(e.name, entries.size());
        entries.push_back(std::move(e));
      }
    }
  }
  return entries;
}

ParamStore::ParamStore(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype, Context& ctx,
                       const ParamLayout& layout)
    : dtype_(dtype), entries_(describe(graph, nodes, dtype)) {
  int64_t offset = 0;
  if (layout.blocks.empty()) {
    for (const ParamEntry& e : entries_) offset = e.offset + padded(e.shape.numel(), dtype);
    block_ranges_.emplace_back(0, offset);
  } else {
    offset = lay_out_blocks(entries_, layout, dtype, block_ranges_);
  }
  for (size_t i = 0; i < entries_.size(); ++i) by_name_.emplace(entries_[i].name, i);
  segments_ = segments_of(entries_, offset);
  params_ = Tensor::empty(Shape{offset}, dtype, ctx);
  grads_ = Tensor::empty(Shape{offset}, dtype, ctx);
  params_.fill(0.0, ctx.stream());  // padding stays zero
  grads_.fill(0.0, ctx.stream());

  for (NodeId n : nodes) {
    const Node& node = graph.node(n);
    const std::vector<Shape> shapes = input_shapes(graph, node);
    NodeViews& views = node_views_[n];
    const size_t count = node.layer->param_specs(shapes).size();
    views.params.resize(count);
    views.grads.resize(count);
    const std::vector<TensorSpec> buffer_specs = node.layer->buffer_specs(shapes);
    for (size_t i = 0; i < buffer_specs.size(); ++i) {
      const TensorSpec& spec = buffer_specs[i];
      BufferEntry b{node.name + "." + spec.name, n, static_cast<int>(i), spec};
      BATON_CHECK(!buffer_by_name_.contains(b.name), "duplicate buffer name '", b.name, "'");
      buffer_by_name_.emplace(b.name, buffer_entries_.size());
      Tensor t = Tensor::empty(spec.shape, spec.has_dtype_override ? spec.dtype_override : dtype, ctx);
      buffer_tensors_.push_back(t);
      views.buffers.push_back(t);
      buffer_entries_.push_back(std::move(b));
    }
  }
  for (const ParamEntry& e : entries_) {
    NodeViews& views = node_views_[e.node];
    views.params[static_cast<size_t>(e.index)] = flat_view(params_, e);
    views.grads[static_cast<size_t>(e.index)] = flat_view(grads_, e);
  }
}

int64_t ParamStore::num_parameters() const {
  int64_t n = 0;
  for (const ParamEntry& e : entries_) n += e.shape.numel();
  return n;
}

const ParamEntry& ParamStore::entry(const std::string& name) const {
  const auto it = by_name_.find(name);
  BATON_CHECK(it != by_name_.end(), "no parameter named '", name, "'");
  return entries_[it->second];
}

Tensor ParamStore::param(const std::string& name) const { return flat_view(params_, entry(name)); }
Tensor ParamStore::grad(const std::string& name) const { return flat_view(grads_, entry(name)); }

Tensor ParamStore::buffer(const std::string& name) const {
  const auto it = buffer_by_name_.find(name);
  BATON_CHECK(it != buffer_by_name_.end(), "no buffer named '", name, "'");
  return buffer_tensors_[it->second];
}

std::span<const Tensor> ParamStore::node_params(NodeId node) const {
  const auto it = node_views_.find(node);
  return it == node_views_.end() ? std::span<const Tensor>() : std::span<const Tensor>(it->second.params);
}

std::span<const Tensor> ParamStore::node_grads(NodeId node) const {
  const auto it = node_views_.find(node);
  return it == node_views_.end() ? std::span<const Tensor>() : std::span<const Tensor>(it->second.grads);
}

std::span<const Tensor> ParamStore::node_buffers(NodeId node) const {
  const auto it = node_views_.find(node);
  return it == node_views_.end() ? std::span<const Tensor>() : std::span<const Tensor>(it->second.buffers);
}

void ParamStore::initialize(Context& ctx, uint64_t seed) {
  params_.fill(0.0, ctx.stream());
  for (const ParamEntry& e : entries_) {
    Tensor view = flat_view(params_, e);
    const auto offset = static_cast<uint64_t>(e.init_offset);
    switch (e.init.kind) {
      case Initializer::Kind::constant:
        view.fill(e.init.a, ctx.stream());
        break;
      case Initializer::Kind::uniform:
        kernels::uniform(ctx, view, seed, offset, e.init.a, e.init.b);
        break;
      case Initializer::Kind::normal:
        kernels::normal(ctx, view, seed, offset, e.init.a, e.init.b);
        break;
    }
  }
  for (size_t i = 0; i < buffer_entries_.size(); ++i) {
    const Initializer& init = buffer_entries_[i].spec.init;
    BATON_CHECK(init.kind == Initializer::Kind::constant, "buffer '", buffer_entries_[i].name,
                "' needs a constant initialiser");
    buffer_tensors_[i].fill(init.a, ctx.stream());
  }
}

void ParamStore::zero_grads(Context& ctx) { grads_.fill(0.0, ctx.stream()); }

}  // namespace baton
