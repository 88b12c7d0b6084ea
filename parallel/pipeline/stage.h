// PipelineStage: one stage of a plan as a sub-graph: its nodes, a Context (compute stream) on its
// device, its own ParamStore and an Executor over those nodes. How stages connect is the
// PipelineRouting's (routing.h).
#pragma once

#include <memory>
#include <vector>

#include "runtime/graph/executor.h"
#include "runtime/graph/param_store.h"

namespace baton::parallel {

// Copies every parameter and buffer named in `names` (one of the two stores: the part of the model
// a stage holds) from `src` to `dst`, ordered on ctx's stream.
void copy_by_name(const ParamStore& names, ParamStore& dst, const ParamStore& src, Context& ctx);

class PipelineStage {
 public:
  // `layout`: the store's parameter layout (gradient buckets of the hybrid's bucket strategy).
  PipelineStage(const Graph& graph, int index, std::vector<NodeId> nodes, Device device, DType dtype,
                ExecutorOptions options, const ParamLayout& layout = {});
  PipelineStage(const PipelineStage&) = delete;
  PipelineStage& operator=(const PipelineStage&) = delete;

  int index() const { return index_; }
  Device device() const { return ctx_->device(); }
  Context& context() { return *ctx_; }
  ParamStore& params() { return *params_; }
  const ParamStore& params() const { return *params_; }
  Executor& executor() { return *executor_; }
  const Executor& executor() const { return *executor_; }

  // Copies parameter and buffer values by name from `source` (a whole-model store, or any store
  // holding this stage's names) into this stage's store; ordered on this stage's stream.
  void load_from(const ParamStore& source);
  // Before a training step: zero gradients, and no deferred statistics left over from a failed step.
  void start_training_step();

 private:
  int index_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<ParamStore> params_;
  std::unique_ptr<Executor> executor_;
};

}  // namespace baton::parallel
