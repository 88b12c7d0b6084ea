// Executor: forward over a node list recording a tape, backward walking the tape in reverse, and
// the deferred buffer updates (batch norm statistics) committed or discarded after a step.
#include "runtime/graph/executor.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "kernels/elementwise.h"
#include "kernels/layout.h"
#include "runtime/core/error.h"
#include "runtime/graph/node_range.h"

namespace baton {
namespace {

// A node's seed for random layers: a mix of the micro-batch seed and the node id (splitmix64).
uint64_t node_seed(uint64_t seed, NodeId node) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(node) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// t, or its row-major copy when it is channels-last (Layer::reads_channels_last).
Tensor row_major(Context& ctx, const Tensor& t) {
  return t.defined() ? kernels::to_memory_format(ctx, t, MemoryFormat::contiguous) : t;
}

std::string describe(const Node& node) { return "node '" + node.name + "' (" + std::string(node.layer->type()) + ")"; }

}  // namespace

Executor::Executor(const Graph& graph, std::vector<NodeId> nodes, ParamStore& params, ExecutorOptions options)
    : graph_(graph), params_(params), options_(options) {
  NodeRange range = node_range(graph, std::move(nodes));
  nodes_ = std::move(range.nodes);
  input_values_ = std::move(range.inputs);
  output_values_ = std::move(range.outputs);
  last_use_.assign(static_cast<size_t>(graph.num_values()), -1);
  for (size_t pos = 0; pos < nodes_.size(); ++pos) {
    for (ValueId v : graph.node(nodes_[pos]).inputs) last_use_[static_cast<size_t>(v)] = static_cast<int>(pos);
  }
  node_entries_.resize(nodes_.size());
  for (size_t pos = 0; pos < nodes_.size(); ++pos) {
    for (const ParamEntry& e : params_.params()) {
      if (e.node == nodes_[pos]) node_entries_[pos].push_back(&e);
    }
    const Node& node = graph.node(nodes_[pos]);
    std::vector<Shape> shapes;
    for (ValueId v : node.inputs) shapes.push_back(graph.value(v).shape);
    BATON_CHECK(params_.node_params(nodes_[pos]).size() == node.layer->param_specs(shapes).size(),
                "executor: ", describe(node), " has no parameters in the ParamStore");
  }
  deferred_.resize(nodes_.size());
  if (options_.defer_buffer_updates) {
    for (size_t pos = 0; pos < nodes_.size(); ++pos)
      deferred_[pos] = graph.node(nodes_[pos]).layer->make_deferred_update();
  }
}

Tensor Executor::leaving_range(Context& ctx, ValueId v, const Tensor& t) const {
  const std::vector<ValueId>& graph_outputs = graph_.outputs();
  const bool graph_output = std::find(graph_outputs.begin(), graph_outputs.end(), v) != graph_outputs.end();
  return options_.keep_boundary_formats && !graph_output ? t : row_major(ctx, t);
}

void Executor::commit_deferred_updates(Context& ctx) {
  for (size_t pos = 0; pos < nodes_.size(); ++pos) {
    if (!deferred_[pos]) continue;
    const Node& node = graph_.node(nodes_[pos]);
    try {
      deferred_[pos]->commit(ctx, params_.node_buffers(nodes_[pos]));
    } catch (Error& e) {
      e.add_context("while committing the deferred buffer updates of " + describe(node));
      throw;
    }
  }
}

void Executor::discard_deferred_updates() {
  for (auto& d : deferred_) {
    if (d) d->discard();
  }
}

std::vector<Tensor> Executor::forward(Context& ctx, const std::vector<Tensor>& inputs, Tape& tape, Mode mode,
                                      uint64_t seed) {
  tape.clear();
  const bool train = mode == Mode::train;
  const bool keep_saved = train && !options_.recompute;
  std::vector<Tensor> outputs = run_forward(ctx, inputs, tape, mode, seed, keep_saved, true);
  if (train) {
    tape.seed_ = seed;
    tape.recorded_ = true;
    if (options_.recompute) tape.inputs_ = inputs;
  }
  return outputs;
}

std::vector<Tensor> Executor::run_forward(Context& ctx, const std::vector<Tensor>& inputs, Tape& tape, Mode mode,
                                          uint64_t seed, bool keep_saved, bool update_buffers) {
  BATON_CHECK(inputs.size() == input_values_.size(), "executor forward: ", inputs.size(), " inputs given, expected ",
              input_values_.size());
  std::unordered_map<ValueId, Tensor> live;
  for (size_t i = 0; i < inputs.size(); ++i) {
    BATON_CHECK(inputs[i].defined(), "executor forward: input '", graph_.value(input_values_[i]).name,
                "' is an undefined tensor");
    live[input_values_[i]] = inputs[i];
  }
  const std::unordered_set<ValueId> keep(output_values_.begin(), output_values_.end());
  tape.saved_.assign(nodes_.size(), {});
  tape.output_shapes_.assign(nodes_.size(), {});
  for (size_t pos = 0; pos < nodes_.size(); ++pos) {
    const NodeId n = nodes_[pos];
    const Node& node = graph_.node(n);
    // The node's time includes the conversions made for it.
    if (node_hook_) node_hook_(n, Phase::forward, true);
    std::vector<Tensor> node_inputs;
    for (ValueId v : node.inputs) {
      // A layer that does not read channels-last tensors gets row-major ones (converted once per value).
      if (!node.layer->reads_channels_last()) live.at(v) = row_major(ctx, live.at(v));
      node_inputs.push_back(live.at(v));
    }
    ForwardResult result;
    try {
      result = node.layer->forward(ForwardArgs{.ctx = ctx,
                                               .mode = mode,
                                               .inputs = node_inputs,
                                               .params = params_.node_params(n),
                                               .buffers = params_.node_buffers(n),
                                               .update_buffers = update_buffers,
                                               .seed = node_seed(seed, n),
                                               .deferred = update_buffers ? deferred_[pos].get() : nullptr});
    } catch (Error& e) {
      e.add_context("in forward of " + describe(node));
      throw;
    }
    if (node_hook_) node_hook_(n, Phase::forward, false);
    BATON_CHECK(result.outputs.size() == node.outputs.size(), describe(node), " returned ", result.outputs.size(),
                " outputs, expected ", node.outputs.size());
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      tape.output_shapes_[pos].push_back(result.outputs[k].shape());
      live[node.outputs[k]] = std::move(result.outputs[k]);
    }
    if (keep_saved) tape.saved_[pos] = std::move(result.saved);
    // Free what no later node in the range reads.
    for (ValueId v : node.inputs) {
      if (last_use_[static_cast<size_t>(v)] == static_cast<int>(pos) && !keep.contains(v)) live.erase(v);
    }
  }
  std::vector<Tensor> outputs;
  for (ValueId v : output_values_) outputs.push_back(leaving_range(ctx, v, live.at(v)));
  return outputs;
}

std::vector<Tensor> Executor::backward(Context& ctx, Tape& tape, const std::vector<Tensor>& output_grads,
                                       bool last_microbatch) {
  BATON_CHECK(!tape.empty(), "executor backward: the tape is empty (run forward in train mode first)");
  BATON_CHECK(output_grads.size() == output_values_.size(), "executor backward: ", output_grads.size(),
              " output gradients given, expected ", output_values_.size());
  if (options_.recompute) {
    run_forward(ctx, tape.inputs_, tape, Mode::train, tape.seed_, /*keep_saved=*/true, /*update_buffers=*/false);
  }
  const std::unordered_set<NodeId> in_range(nodes_.begin(), nodes_.end());
  const std::vector<ValueId>& graph_outputs = graph_.outputs();
  std::unordered_map<ValueId, Tensor> grads;
  auto shape_of = [&](ValueId v) {
    const ValueInfo& info = graph_.value(v);
    const auto pos = std::find(nodes_.begin(), nodes_.end(), info.producer) - nodes_.begin();
    return tape.output_shapes_[static_cast<size_t>(pos)][static_cast<size_t>(info.producer_output)];
  };
  for (size_t i = 0; i < output_values_.size(); ++i) {
    const ValueId v = output_values_[i];
    if (output_grads[i].defined()) {
      grads[v] = output_grads[i];
      continue;
    }
    const bool is_graph_output = std::find(graph_outputs.begin(), graph_outputs.end(), v) != graph_outputs.end();
    const Shape shape = shape_of(v);
    if (is_graph_output && shape.numel() == 1 && is_floating(graph_.value(v).dtype)) {
      Tensor one = Tensor::empty(shape, graph_.value(v).dtype, ctx);  // dL/dL = 1
      one.fill(1.0, ctx.stream());
      grads[v] = one;
    }
  }
  // A value needs a gradient when it is produced in the range or by another stage (not a graph input).
  auto wants_grad = [&](ValueId v) { return graph_.value(v).producer >= 0 && is_floating(graph_.value(v).dtype); };

  for (size_t pos = nodes_.size(); pos-- > 0;) {
    const NodeId n = nodes_[pos];
    const Node& node = graph_.node(n);
    const bool reached =
        std::any_of(node.outputs.begin(), node.outputs.end(), [&](ValueId v) { return grads.contains(v); });
    if (reached) {
      // The node's time includes the conversions made for it and the sums of its input gradients.
      if (node_hook_) node_hook_(n, Phase::backward, true);
      std::vector<Tensor> out_grads;
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        const auto it = grads.find(node.outputs[k]);
        if (it != grads.end()) {
          out_grads.push_back(node.layer->reads_channels_last() ? it->second : row_major(ctx, it->second));
          continue;
        }
        Tensor zeros = Tensor::empty(tape.output_shapes_[pos][k], graph_.value(node.outputs[k]).dtype, ctx);
        zeros.fill(0.0, ctx.stream());
        out_grads.push_back(zeros);
      }
      std::vector<bool> needs(node.inputs.size());
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        needs[i] = node.layer->differentiable_input(static_cast<int>(i)) && wants_grad(node.inputs[i]);
      }
      std::vector<Tensor> in_grads;
      try {
        in_grads = node.layer->backward(BackwardArgs{.ctx = ctx,
                                                     .output_grads = out_grads,
                                                     .saved = tape.saved_[pos],
                                                     .params = params_.node_params(n),
                                                     .param_grads = params_.node_grads(n),
                                                     .needs_input_grad = needs});
      } catch (Error& e) {
        e.add_context("in backward of " + describe(node));
        throw;
      }
      BATON_CHECK(in_grads.size() == node.inputs.size(), describe(node), " returned ", in_grads.size(),
                  " input gradients, expected ", node.inputs.size());
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (!needs[i] || !in_grads[i].defined()) continue;
        const ValueId v = node.inputs[i];
        auto it = grads.find(v);
        if (it == grads.end()) {
          grads.emplace(v, in_grads[i]);
        } else {
          // Fan-out: sum into a new tensor (either gradient may alias another value's gradient).
          it->second = kernels::sum_in_format_of(ctx, it->second, in_grads[i]);
        }
      }
      if (node_hook_) node_hook_(n, Phase::backward, false);
    }
    for (ValueId v : node.outputs) grads.erase(v);
    tape.saved_[pos].clear();
    if (last_microbatch && grad_ready_) {
      for (const ParamEntry* e : node_entries_[pos]) grad_ready_(*e, reached);
    }
  }
  std::vector<Tensor> input_grads;
  for (ValueId v : input_values_) {
    const auto it = grads.find(v);
    input_grads.push_back(it == grads.end() || in_range.contains(graph_.value(v).producer)
                              ? Tensor()
                              : leaving_range(ctx, v, it->second));
  }
  tape.clear();
  return input_grads;
}

}  // namespace baton
