// PipelineRun's compute instructions: the forward and the backward of one micro-batch through one
// stage, and a stage's optimiser step (after committing its deferred batch-norm statistics).
#include "parallel/pipeline/pipeline_run.h"
#include "parallel/pipeline/transfer.h"
#include "runtime/train/optimizer.h"

namespace baton::parallel {

void PipelineRun::forward(int s, int mb) {
  PipelineStage& st = stage(s);
  StageState& state = this->state(s);
  Context& ctx = st.context();
  std::vector<Tensor>& in = state.inputs[static_cast<size_t>(mb)];
  const std::vector<ValueId>& names = st.executor().input_values();
  for (size_t k = 0; k < in.size(); ++k) {
    const StageInput& source = routing_.sources(s)[k];
    if (source.graph_input >= 0) {
      // Data and labels go straight from the batch to the stage that reads them.
      in[k] = on_device_of(batches_.inputs[static_cast<size_t>(source.graph_input)][static_cast<size_t>(mb)], ctx);
    }
    BATON_CHECK(in[k].defined(), "input '", parts_.graph.value(names[k]).name, "' from stage ", source.producer_stage,
                " has not been received (no recv_activation before this forward)");
  }
  std::vector<Tensor>& out = state.outputs[static_cast<size_t>(mb)];
  out = st.executor().forward(ctx, in, state.tapes[static_cast<size_t>(mb)], settings_.mode,
                              micro_batch_seed(settings_.seed, mb));
  in.assign(in.size(), Tensor());  // the tape keeps what backward (or recomputation) needs
  if (settings_.mode == Mode::train) {
    if (s == routing_.loss_stage()) state.losses[static_cast<size_t>(mb)] = out[routing_.loss_output()];
    return;
  }
  // Forward only: keep the graph outputs; nothing is needed for backward.
  for (const GraphOutputSource& g : routing_.graph_outputs(s)) {
    results_[g.graph_output][static_cast<size_t>(mb)] = out[g.stage_output];
  }
  state.tapes[static_cast<size_t>(mb)] = Tape();
  if (state.activation_sends_left[static_cast<size_t>(mb)] == 0) out.clear();  // no consumer stage
}

void PipelineRun::backward(int s, int mb) {
  PipelineStage& st = stage(s);
  StageState& state = this->state(s);
  Context& ctx = st.context();
  std::vector<Tensor> grads = std::move(state.output_grads[static_cast<size_t>(mb)]);
  if (s == routing_.loss_stage()) {
    // The loss is a mean over the micro-batch: scaled by n_m / N, the micro-batch gradients sum to
    // the whole batch's. This is the only place the 1/M scaling happens.
    const Tensor& loss = state.losses[static_cast<size_t>(mb)];
    Tensor seed = Tensor::empty(loss.shape(), loss.dtype(), ctx);
    seed.fill(batches_.loss_scale(mb), ctx.stream());
    grads[routing_.loss_output()] = seed;
  }
  const bool last = ++state.backwards_done == batches_.count();
  state.input_grads[static_cast<size_t>(mb)] =
      st.executor().backward(ctx, state.tapes[static_cast<size_t>(mb)], grads, last);
  state.outputs[static_cast<size_t>(mb)].clear();
}

void PipelineRun::optimizer_step(int s) {
  PipelineStage& st = stage(s);
  // After the stage's last backward (validate_schedule): every forward of the step has run, so
  // deferred batch-norm statistics cover the whole mini-batch.
  st.executor().commit_deferred_updates(st.context());
  if (!parts_.optimizers.empty()) parts_.optimizers[static_cast<size_t>(s)]->step(st.context(), settings_.lr);
}

}  // namespace baton::parallel
