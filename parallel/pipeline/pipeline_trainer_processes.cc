// PipelineTrainEngine across processes (the hybrid under mpirun): the data shard of each process's
// group, world rank 0 printing and writing, evaluation by group 0's processes with the result sent
// to all, and checkpoints in the single-device format through a whole model on the host.
#include <array>

#include "parallel/pipeline/pipeline_trainer.h"
#include "parallel/pipeline/whole_model.h"
#include "runtime/core/error.h"
#include "runtime/train/graph_contract.h"

namespace baton::parallel {

EvalResult PipelineTrainEngine::evaluate_across_processes(const data::Dataset& test, int64_t batch_size, int workers) {
  PipelineExecutor& pipe = executor();
  const std::vector<int>& output_stage = pipe.routing().output_stage();
  const int prediction_stage = output_stage.at(has_labels(graph_) ? kPredictionOutput : kLossOutput);
  BATON_CHECK(output_stage.at(kLossOutput) == prediction_stage,
              "evaluating a pipeline across processes needs the loss and the prediction on one stage (the loss is "
              "on stage ",
              output_stage.at(kLossOutput), ", the prediction on stage ", prediction_stage, ")");
  EvalResult result;
  if (hybrid_->local_group() == 0) {
    // Group 0's processes forward every test batch through their stages; the process of the
    // prediction stage counts.
    result = evaluate_batches(
        input_context(), test, batch_size, workers, has_labels(graph_), EvalStop::never, [&](const data::Batch& batch) {
          input_context().stream().synchronize();
          return eval_pieces(batch, hybrid_->evaluate(batch_inputs(graph_, graph_.inputs(), batch)));
        });
  }
  // From group 0's process of the prediction stage (world rank = its position) to every process.
  Tensor values = Tensor::empty_host({4}, DType::f64);
  double* v = values.data<double>();
  v[0] = result.loss;
  v[1] = result.top1;
  v[2] = result.top5;
  v[3] = static_cast<double>(result.samples);
  options_.world->broadcast(values, pipe.position_of(prediction_stage), Stream::create(Device::cpu()))->wait();
  return {.loss = v[0], .top1 = v[1], .top5 = v[2], .samples = static_cast<int64_t>(v[3])};
}

std::string PipelineTrainEngine::save_across_processes(CheckpointManager& manager, const CheckpointState& state,
                                                       const std::vector<CheckpointExtraFile>& extras) {
  PipelineExecutor& pipe = executor();
  pipe.raise_deferred_errors();
  if (hybrid_->local_group() != 0) return {};  // group 0's parameters, as in one process
  WholeModel whole(graph_, options_.precision.master(), optimizer_config_);
  for (int s = 0; s < pipe.num_stages(); ++s) {  // a stage's first replica speaks for it
    if (pipe.local(s) && pipe.first_replica(s)) whole.take(pipe.stage(s), pipe.stage_optimizer(s));
  }
  whole.gather(*pipe.processes());
  if (!primary()) return {};
  return manager.save(whole.params(), *whole.optimizer(), state, whole.context(), extras);
}

CheckpointState PipelineTrainEngine::load_across_processes(const std::string& dir) {
  // Every process reads the files (checked in full, as on one device) and takes its stages' part.
  WholeModel whole(graph_, options_.precision.master(), optimizer_config_);
  const CheckpointState state = CheckpointManager::load(dir, whole.params(), whole.optimizer(), whole.context());
  PipelineExecutor& pipe = executor();
  for (int s = 0; s < pipe.num_stages(); ++s) {
    if (pipe.local(s)) whole.give(pipe.stage(s), pipe.stage_optimizer(s));
  }
  return state;
}

void PipelineTrainEngine::load_weights_across_processes(const std::string& safetensors_path) {
  WholeModel whole(graph_, options_.precision.master(), nullptr);
  baton::load_weights(safetensors_path, whole.params(), whole.context());
  PipelineExecutor& pipe = executor();
  for (int s = 0; s < pipe.num_stages(); ++s) {
    if (pipe.local(s)) whole.give(pipe.stage(s), nullptr);
  }
  hybrid_->restart_averaging();
}

}  // namespace baton::parallel
