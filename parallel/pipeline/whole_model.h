// WholeModel: the whole model's parameters, buffers and optimiser state on the host, through which
// a pipeline across processes writes and reads checkpoints in the single-device format: each
// process copies its stages in (zeros elsewhere) and a sum over the pipeline's processes gathers
// them; loading goes the other way, every process reading the file and taking its stages' part.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "parallel/comm/communicator.h"
#include "parallel/pipeline/stage.h"
#include "runtime/train/optimizer.h"

namespace baton::parallel {

class WholeModel {
 public:
  // Zeros everywhere; with an optimiser config (null: none), its state too.
  WholeModel(const Graph& graph, DType dtype, const nlohmann::json& optimizer);
  WholeModel(const WholeModel&) = delete;
  WholeModel& operator=(const WholeModel&) = delete;

  Context& context() { return ctx_; }
  ParamStore& params() { return *params_; }
  Optimizer* optimizer() { return optimizer_.get(); }

  // A stage's parameters, buffers and optimiser state (with its step count) into this, by name.
  void take(PipelineStage& stage, const Optimizer* stage_optimizer);
  // The other way: this model's values of the stage's names into the stage (finished on return).
  void give(PipelineStage& stage, Optimizer* stage_optimizer);
  // Every tensor becomes the sum over `processes` (each process holding its own stages, zeros
  // elsewhere: the gathered model); the optimiser's step count is the first rank's.
  void gather(comm::Communicator& processes);

 private:
  Context ctx_;
  std::unique_ptr<ParamStore> params_;
  std::unique_ptr<Optimizer> optimizer_;
};

}  // namespace baton::parallel
