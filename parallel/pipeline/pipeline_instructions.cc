// PipelineExecutor: the instructions a worker issues — forward and backward of one micro-batch
// through a stage, sends and receives of activations and gradients, all-reduce, optimiser step (with
// the stage's deferred batch-norm statistics committed first) — and, for traced steps, their
// measured start and end.
#include "kernels/elementwise.h"
#include "parallel/pipeline/pipeline_executor.h"
#include "runtime/train/optimizer.h"

namespace baton::parallel {

namespace {

TraceEvent trace_event(const Instruction& ins, const Schedule& schedule) {
  TraceEvent e;
  const std::string chunk = schedule.chunks() > 1 ? " s" + std::to_string(ins.stage) : std::string();
  const std::string mb = std::to_string(ins.micro_batch);
  e.args = {{"stage", ins.stage}};
  if (ins.micro_batch >= 0) e.args["micro_batch"] = ins.micro_batch;
  switch (ins.op) {
    case Op::forward:
      e.name = "F" + mb + chunk;
      e.category = "forward";
      break;
    case Op::backward:
      e.name = "B" + mb + chunk;
      e.category = "backward";
      break;
    case Op::send_activation:
    case Op::send_gradient:
      e.name = (ins.op == Op::send_activation ? "send act " : "send grad ") + mb + " -> s" + std::to_string(ins.peer);
      e.category = "transfer";
      e.args["to_stage"] = ins.peer;
      break;
    default:
      e.name = "optimizer s" + std::to_string(ins.stage);
      e.category = "optimizer";
      break;
  }
  return e;
}

}  // namespace

StepRecorder& PipelineExecutor::recorder() {
  if (!recorder_) {
    const int positions = schedule_.devices;
    std::vector<std::string> names;
    for (int p = 0; p < positions; ++p) {
      std::string stages;
      for (int s = p; s < num_stages(); s += positions) stages += (stages.empty() ? "" : ", ") + std::to_string(s);
      names.push_back(stage(p).device().str() + " compute (stage" + (num_stages() > positions ? "s " : " ") + stages + ")");
    }
    std::vector<std::pair<int, int>> links;
    for (int i = 0; i < num_stages(); ++i) {
      for (int j = 0; j < num_stages(); ++j) {
        const bool linked = !links_[static_cast<size_t>(i)][static_cast<size_t>(j)].empty() ||
                            !links_[static_cast<size_t>(j)][static_cast<size_t>(i)].empty();
        if (linked && stage(i).device() != stage(j).device()) links.emplace_back(i, j);
      }
    }
    recorder_ = std::make_unique<StepRecorder>(names, links);
  }
  return *recorder_;
}

std::vector<TraceEvent> PipelineExecutor::take_trace() { return recorder_ ? recorder_->take() : std::vector<TraceEvent>{}; }

std::vector<TraceLane> PipelineExecutor::trace_lanes() { return recorder().lanes(); }

void PipelineExecutor::execute(const Instruction& ins, int position) {
  if (!tracing_) {
    dispatch(ins);
    return;
  }
  StepRecorder& rec = *recorder_;
  PipelineStage& st = *stages_[static_cast<size_t>(ins.stage)];
  switch (ins.op) {
    case Op::forward:
    case Op::backward:
    case Op::optimizer_step: {
      if (ins.op == Op::optimizer_step && optimizers_.empty()) break;
      TraceMark start = rec.mark(st.context().stream());
      dispatch(ins);
      TraceMark end = rec.mark(st.context().stream());
      TraceEvent e = trace_event(ins, schedule_);
      e.thread = rec.compute_lane(position);
      rec.add(position, std::move(e), std::move(start), std::move(end));
      return;
    }
    case Op::send_activation:
    case Op::send_gradient: {
      if (st.device() == stages_[static_cast<size_t>(ins.peer)]->device()) break;  // no copy: nothing to time
      std::pair<TraceMark, TraceMark> marks;
      send(ins, ins.op == Op::send_activation ? MessageKind::activation : MessageKind::gradient, &marks);
      TraceEvent e = trace_event(ins, schedule_);
      e.thread = rec.link_lane(ins.stage, ins.peer);
      rec.add(position, std::move(e), std::move(marks.first), std::move(marks.second));
      return;
    }
    default:
      break;
  }
  dispatch(ins);
}

void PipelineExecutor::dispatch(const Instruction& ins) {
  switch (ins.op) {
    case Op::forward: forward(ins.stage, ins.micro_batch); break;
    case Op::backward: backward(ins.stage, ins.micro_batch); break;
    case Op::send_activation: send(ins, MessageKind::activation); break;
    case Op::recv_activation: recv(ins, MessageKind::activation); break;
    case Op::send_gradient: send(ins, MessageKind::gradient); break;
    case Op::recv_gradient: recv(ins, MessageKind::gradient); break;
    case Op::all_reduce:
      // Plans with replicas are refused at construction: one replica has nothing to reduce.
      break;
    case Op::optimizer_step: {
      PipelineStage& stage = *stages_[static_cast<size_t>(ins.stage)];
      // After the stage's last backward (validate_schedule): every forward of the step has run, so
      // deferred batch-norm statistics cover the whole mini-batch.
      stage.executor().commit_deferred_updates(stage.context());
      if (!optimizers_.empty()) optimizers_[static_cast<size_t>(ins.stage)]->step(stage.context(), step_options_.lr);
      break;
    }
  }
}

void PipelineExecutor::forward(int s, int mb) {
  PipelineStage& stage = *stages_[static_cast<size_t>(s)];
  StageState& st = *state_[static_cast<size_t>(s)];
  Context& ctx = stage.context();
  std::vector<Tensor>& in = st.inputs[static_cast<size_t>(mb)];
  const std::vector<ValueId>& names = stage.executor().input_values();
  for (size_t k = 0; k < in.size(); ++k) {
    const StageInput& source = sources_[static_cast<size_t>(s)][k];
    if (source.graph_input >= 0) {
      // Data and labels go straight from the batch to the stage that reads them.
      in[k] = on_device_of(micro_inputs_[static_cast<size_t>(source.graph_input)][static_cast<size_t>(mb)], ctx);
    }
    BATON_CHECK(in[k].defined(), "input '", graph_.value(names[k]).name, "' from stage ", source.producer_stage,
                " has not been received (no recv_activation before this forward)");
  }
  std::vector<Tensor>& out = st.outputs[static_cast<size_t>(mb)];
  out = stage.executor().forward(ctx, in, st.tapes[static_cast<size_t>(mb)], mode_,
                                 micro_batch_seed(step_options_.seed, mb));
  in.assign(in.size(), Tensor());  // the tape keeps what backward (or recomputation) needs
  if (mode_ == Mode::train) {
    if (s == loss_stage_) st.losses[static_cast<size_t>(mb)] = out[loss_output_];
    return;
  }
  // Forward only: keep the graph outputs; nothing is needed for backward.
  for (const auto& [graph_output, index] : stage_graph_outputs_[static_cast<size_t>(s)]) {
    results_[graph_output][static_cast<size_t>(mb)] = out[index];
  }
  st.tapes[static_cast<size_t>(mb)] = Tape();
  if (st.activation_sends_left[static_cast<size_t>(mb)] == 0) out.clear();  // no consumer stage
}

void PipelineExecutor::backward(int s, int mb) {
  PipelineStage& stage = *stages_[static_cast<size_t>(s)];
  StageState& st = *state_[static_cast<size_t>(s)];
  Context& ctx = stage.context();
  std::vector<Tensor> grads = std::move(st.output_grads[static_cast<size_t>(mb)]);
  if (s == loss_stage_) {
    // The loss is a mean over the micro-batch: scaled by n_m / N, the micro-batch gradients sum to
    // the whole batch's. This is the only place the 1/M scaling happens.
    const Tensor& loss = st.losses[static_cast<size_t>(mb)];
    Tensor seed = Tensor::empty(loss.shape(), loss.dtype(), ctx);
    seed.fill(loss_scale_[static_cast<size_t>(mb)], ctx.stream());
    grads[loss_output_] = seed;
  }
  const bool last = ++st.backwards_done == schedule_.micro_batches;
  st.input_grads[static_cast<size_t>(mb)] =
      stage.executor().backward(ctx, st.tapes[static_cast<size_t>(mb)], grads, last);
  st.outputs[static_cast<size_t>(mb)].clear();
}

void PipelineExecutor::send(const Instruction& ins, MessageKind kind, std::pair<TraceMark, TraceMark>* marks) {
  const int s = ins.stage, peer = ins.peer, mb = ins.micro_batch;
  PipelineStage& stage = *stages_[static_cast<size_t>(s)];
  StageState& st = *state_[static_cast<size_t>(s)];
  const bool activation = kind == MessageKind::activation;
  const auto& link = activation ? links_[static_cast<size_t>(s)][static_cast<size_t>(peer)]
                                : links_[static_cast<size_t>(peer)][static_cast<size_t>(s)];
  BATON_CHECK(!link.empty(), "stage ", s, " has no boundary value ", activation ? "for" : "from", " stage ", peer);
  std::vector<Tensor>& from = activation ? st.outputs[static_cast<size_t>(mb)] : st.input_grads[static_cast<size_t>(mb)];
  BATON_CHECK(!from.empty(), "nothing to send: the ", activation ? "forward" : "backward",
              " of this micro-batch has not run on this stage");
  std::vector<Tensor> tensors;
  for (const auto& [out_index, in_index] : link) tensors.push_back(from[activation ? out_index : in_index]);
  Message message = send_tensors(tensors, stage.context(), stages_[static_cast<size_t>(peer)]->device(),
                                 streams_[static_cast<size_t>(s)][static_cast<size_t>(peer)], marks ? recorder_.get() : nullptr,
                                 marks);
  mailbox_.post({s, peer, mb, kind}, std::move(message));
  // Drop this side's references once every peer has its copy (the loss stays for step()).
  int& left = activation ? st.activation_sends_left[static_cast<size_t>(mb)] : st.gradient_sends_left[static_cast<size_t>(mb)];
  if (--left == 0) from.clear();
}

void PipelineExecutor::recv(const Instruction& ins, MessageKind kind) {
  const int s = ins.stage, peer = ins.peer, mb = ins.micro_batch;
  PipelineStage& stage = *stages_[static_cast<size_t>(s)];
  StageState& st = *state_[static_cast<size_t>(s)];
  Context& ctx = stage.context();
  Message message = mailbox_.take({peer, s, mb, kind});
  receive_tensors(message, ctx);
  if (kind == MessageKind::activation) {
    const auto& link = links_[static_cast<size_t>(peer)][static_cast<size_t>(s)];
    BATON_CHECK(message.tensors.size() == link.size(), "stage ", s, " received ", message.tensors.size(),
                " activations from stage ", peer, ", expected ", link.size());
    for (size_t k = 0; k < link.size(); ++k) st.inputs[static_cast<size_t>(mb)][link[k].second] = message.tensors[k];
    return;
  }
  const auto& link = links_[static_cast<size_t>(s)][static_cast<size_t>(peer)];
  BATON_CHECK(message.tensors.size() == link.size(), "stage ", s, " received ", message.tensors.size(),
              " gradients from stage ", peer, ", expected ", link.size());
  std::vector<Tensor>& grads = st.output_grads[static_cast<size_t>(mb)];
  for (size_t k = 0; k < link.size(); ++k) {
    const Tensor& g = message.tensors[k];
    if (!g.defined()) continue;
    Tensor& acc = grads[link[k].first];
    if (!acc.defined()) {
      acc = g;
    } else {
      // A value read by several later stages (a skip tensor): its gradients add up.
      Tensor sum = Tensor::empty(acc.shape(), acc.dtype(), ctx);
      kernels::add(ctx, acc, g, sum);
      acc = sum;
    }
  }
}

}  // namespace baton::parallel
