// PipelineStage: one stage of a plan as a sub-graph: its nodes, a Context (compute stream) on its
// device, its own ParamStore and an Executor over those nodes, plus where each boundary value
// comes from and goes to.
#pragma once

#include <memory>
#include <vector>

#include "runtime/graph/executor.h"
#include "runtime/graph/param_store.h"

namespace baton::parallel {

// Where one of a stage's executor inputs comes from.
struct StageInput {
  int graph_input = -1;     // index in graph.inputs() (data, labels), or -1
  int producer_stage = -1;  // the stage that produces it otherwise
};

// Copies every parameter and buffer named in `names` (one of the two stores: the part of the model
// a stage holds) from `src` to `dst`, ordered on ctx's stream.
void copy_by_name(const ParamStore& names, ParamStore& dst, const ParamStore& src, Context& ctx);

class PipelineStage {
 public:
  PipelineStage(const Graph& graph, int index, std::vector<NodeId> nodes, Device device, DType dtype,
                ExecutorOptions options);
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

 private:
  int index_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<ParamStore> params_;
  std::unique_ptr<Executor> executor_;
};

}  // namespace baton::parallel
