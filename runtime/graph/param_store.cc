// ParamStore: laying parameters, gradients and buffers of a node set out in flat buffers, named
// views into them, and seeded initialisation.
#include "runtime/graph/param_store.h"

#include "kernels/random.h"
#include "runtime/core/error.h"

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

}  // namespace

ParamStore::ParamStore(const Graph& graph, const std::vector<NodeId>& nodes, DType dtype, Context& ctx)
    : dtype_(dtype) {
  BATON_CHECK(dtype == DType::f32 || dtype == DType::f64, "ParamStore: dtype ", dtype_name(dtype),
              " is not supported (expected f32 or f64)");
  const int64_t align = static_cast<int64_t>(64 / dtype_size(dtype));
  // Two passes: parameters with weight decay, then those without.
  int64_t offset = 0;
  for (bool decay : {true, false}) {
    for (NodeId n : nodes) {
      const Node& node = graph.node(n);
      const std::vector<TensorSpec> specs = node.layer->param_specs(input_shapes(graph, node));
      for (size_t i = 0; i < specs.size(); ++i) {
        if (specs[i].weight_decay != decay) continue;
        ParamEntry e{
            node.name + "." + specs[i].name, n, static_cast<int>(i), specs[i].shape, specs[i].init, decay, offset};
        offset += (specs[i].shape.numel() + align - 1) / align * align;
        BATON_CHECK(!by_name_.contains(e.name), "duplicate parameter name '", e.name, "'");
        by_name_.emplace(e.name, entries_.size());
        entries_.push_back(std::move(e));
      }
    }
    if (decay) decay_end_ = offset;
  }
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
    const auto offset = static_cast<uint64_t>(e.offset);
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
