// Executor: runs forward and backward over a set of nodes of a graph (the whole graph, or one
// pipeline stage) for one micro-batch at a time, with its parameters in a ParamStore.
//
// Forward frees each activation as soon as no later node in the range reads it (layers keep what
// backward needs in the Tape). Backward walks the nodes in reverse, sums the gradients of values
// read by several nodes, accumulates parameter gradients, and fires the grad-ready hook for a node's
// parameters when told it is the step's last micro-batch. With recomputation the Tape keeps only the
// range's inputs and the forward is run again (without touching BatchNorm statistics) in backward.
// With defer_buffer_updates, layers that can (BatchNorm2d) gather their buffer updates over the
// step's micro-batches and apply them once, at commit_deferred_updates.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "runtime/graph/graph.h"
#include "runtime/graph/param_store.h"
#include "runtime/graph/tape.h"

namespace baton {

struct ExecutorOptions {
  bool recompute = false;
  // Train-mode forwards hand layers a DeferredUpdate (Layer::make_deferred_update) instead of
  // letting them update their buffers; commit_deferred_updates applies what was gathered.
  bool defer_buffer_updates = false;
  // Values handed to other ranges (forward outputs that are not graph outputs, backward gradients
  // of the range's inputs) keep their memory format: a pipeline stage's transfers carry it, so a
  // channels-last activation crosses a stage boundary without two conversions each way. Otherwise
  // they are row-major. Graph outputs are row-major either way.
  bool keep_boundary_formats = false;
};

enum class Phase { forward, backward };

class Executor {
 public:
  // `nodes`: graph node ids, any order (sorted topologically here); all must be in `params`.
  Executor(const Graph& graph, std::vector<NodeId> nodes, ParamStore& params, ExecutorOptions options = {});

  // Values the range reads but does not produce (in a stable order): forward's inputs.
  const std::vector<ValueId>& input_values() const { return input_values_; }
  // Values the range produces that are read outside it or are graph outputs: forward's outputs.
  const std::vector<ValueId>& output_values() const { return output_values_; }
  const std::vector<NodeId>& nodes() const { return nodes_; }

  // One tensor per input_values() entry; returns one per output_values() entry. In train mode the
  // tape receives what backward needs; `seed` keys the random layers of this micro-batch.
  std::vector<Tensor> forward(Context& ctx, const std::vector<Tensor>& inputs, Tape& tape, Mode mode,
                              uint64_t seed = 0);
  // One gradient per output_values() entry (undefined: no gradient flows from that output; a
  // scalar output that is a graph output, like the loss, defaults to 1). Accumulates parameter
  // gradients; returns one gradient per input_values() entry (undefined where none flows, e.g.
  // graph inputs and labels). Clears the tape.
  std::vector<Tensor> backward(Context& ctx, Tape& tape, const std::vector<Tensor>& output_grads,
                               bool last_microbatch = true);

  // With ExecutorOptions::defer_buffer_updates: applies the buffer updates gathered by the forwards
  // since the last commit (e.g. running statistics of the whole mini-batch), ordered on ctx's
  // stream; discard forgets them. Without the option both do nothing.
  void commit_deferred_updates(Context& ctx);
  void discard_deferred_updates();

  // Called after the last micro-batch's backward through a node, once per parameter of the node,
  // when that parameter's gradient is final for the step. `reached` tells whether a gradient
  // reached the node in this backward (false: the loss does not depend on it; graphs are static, so
  // every micro-batch of a step answers alike).
  using GradReadyHook = std::function<void(const ParamEntry&, bool reached)>;
  void set_grad_ready_hook(GradReadyHook hook) { grad_ready_ = std::move(hook); }
  // Called before (begin = true) and after each node's forward or backward (for profiling).
  void set_node_hook(std::function<void(NodeId, Phase, bool begin)> hook) { node_hook_ = std::move(hook); }

 private:
  struct Step;
  std::vector<Tensor> run_forward(Context& ctx, const std::vector<Tensor>& inputs, Tape& tape, Mode mode, uint64_t seed,
                                  bool keep_saved, bool update_buffers);
  // A forward output or an input gradient as it leaves the range (ExecutorOptions::keep_boundary_formats).
  Tensor leaving_range(Context& ctx, ValueId v, const Tensor& t) const;

  const Graph& graph_;
  std::vector<NodeId> nodes_;
  ParamStore& params_;
  ExecutorOptions options_;
  std::vector<ValueId> input_values_, output_values_;
  std::vector<int> last_use_;  // per value: position of the last node in the range that reads it (-1: none)
  std::vector<std::vector<const ParamEntry*>> node_entries_;  // per position: the node's parameters
  std::vector<std::unique_ptr<DeferredUpdate>> deferred_;     // per position (defer_buffer_updates)
  GradReadyHook grad_ready_;
  std::function<void(NodeId, Phase, bool)> node_hook_;
};

}  // namespace baton
