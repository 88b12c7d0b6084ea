// PipelineRun: per-run state, one worker thread per pipeline position (or, across processes, this
// process's position on the calling thread), the first error stopping
// every worker, each instruction dispatched (and timed when recording), the compute instructions
// (forward and backward of one micro-batch through a stage, the stage's optimiser step), and the
// run's results. The transfers are in pipeline_run_transfer.cc.
#include "parallel/pipeline/pipeline_run.h"

#include <functional>
#include <string>

#include "parallel/pipeline/transfer.h"
#include "runtime/core/cpu_threads.h"
#include "runtime/core/error.h"
#include "runtime/train/optimizer.h"

namespace baton::parallel {
namespace {

std::string where(const Instruction& ins, int position, size_t index) {
  std::string text = "in pipeline stage " + std::to_string(ins.stage);
  if (ins.micro_batch >= 0) text += ", micro-batch " + std::to_string(ins.micro_batch);
  text +=
      " (" + describe(ins) + ", instruction " + std::to_string(index) + " of worker " + std::to_string(position) + ")";
  return text;
}

}  // namespace

PipelineRun::PipelineRun(const PipelineParts& parts, MicroBatches batches, RunSettings settings)
    : parts_(parts), routing_(parts.routing), batches_(std::move(batches)), settings_(settings) {
  const auto m = static_cast<size_t>(batches_.count());
  states_.resize(parts_.stages.size());
  if (parts_.processes != nullptr) {
    remote_.emplace(*parts_.links, [&positions = parts_.stage_positions](int stage) {
      return positions.at(static_cast<size_t>(stage));
    });
  }
  for (size_t s = 0; s < states_.size(); ++s) {
    if (!routing_.local(static_cast<int>(s))) continue;  // another process runs it
    const Executor& executor = parts_.stages[s]->executor();
    StageState& st = states_[s];
    st.tapes.resize(m);
    st.inputs.assign(m, std::vector<Tensor>(executor.input_values().size()));
    st.outputs.resize(m);
    st.output_grads.assign(m, std::vector<Tensor>(executor.output_values().size()));
    st.input_grads.resize(m);
    st.losses.resize(m);
    st.activation_sends_left.assign(m, routing_.consumer_count(static_cast<int>(s)));
    st.gradient_sends_left.assign(m, routing_.producer_count(static_cast<int>(s)));
  }
  if (settings_.mode == Mode::eval) results_.assign(parts_.graph.outputs().size(), std::vector<Tensor>(m));
  const GroupSync& sync = parts_.group_sync;
  if (settings_.mode != Mode::train || !sync.active() || !settings_.sync_gradients) return;
  for (size_t s = 0; s < states_.size(); ++s) {
    if (!routing_.local(static_cast<int>(s))) {
      syncs_.push_back(nullptr);  // another process synchronises it
      continue;
    }
    const GradientBuckets* buckets = parts_.buckets.empty() ? nullptr : parts_.buckets[s].get();
    syncs_.push_back(std::make_unique<StageSync>(*parts_.stages[s], *sync.communicators[s], sync, buckets));
  }
}

void PipelineRun::execute(const Schedule& schedule) {
  BATON_CHECK(schedule.micro_batches == batches_.count(), "the schedule has ", schedule.micro_batches,
              " micro-batches, the run ", batches_.count());
  schedule_ = &schedule;
  // The backwards each stage runs (all M; a replica of a replicated stage, its own micro-batches).
  backwards_expected_.assign(states_.size(), 0);
  for (const auto& program : schedule.programs) {
    for (const Instruction& ins : program) {
      if (ins.op == Op::backward) ++backwards_expected_.at(static_cast<size_t>(ins.stage));
    }
  }
  if (remote_) {
    // A pipeline across processes: this process runs its own position, on this thread.
    const int position = parts_.processes->rank();
    run_position(schedule.programs.at(static_cast<size_t>(position)), position);
    if (!error_) {
      try {
        remote_->finish();
      } catch (...) {
        record_error(std::current_exception());
      }
    }
  } else {
    // One position per worker (position 0 on this thread). Stages on CPU devices share this
    // thread's CPU threads (runtime/core/cpu_threads.h).
    const int threads = cpu_threads_per_worker(static_cast<int>(schedule.programs.size()));
    std::vector<std::function<void()>> positions;
    for (size_t p = 0; p < schedule.programs.size(); ++p) {
      positions.emplace_back([this, &schedule, p, threads] {
        const CpuThreadsScope scope(threads);
        run_position(schedule.programs[p], static_cast<int>(p));
      });
    }
    try {
      BATON_CHECK(parts_.workers != nullptr, "a pipeline run in one process needs its executor's worker threads");
      parts_.workers->run(positions);
    } catch (...) {
      record_error(std::current_exception());
    }
  }
  if (!error_) return;
  for (auto& stage : parts_.stages) {
    if (!stage) continue;
    try {
      stage->context().synchronize();
    } catch (...) {  // the first error is the one reported
    }
  }
  std::rethrow_exception(error_);
}

void PipelineRun::run_position(const std::vector<Instruction>& program, int position) {
  size_t i = 0;
  try {
    for (; i < program.size(); ++i) {
      if (mailbox_.stopped()) return;
      issue(program[i], position);
    }
  } catch (const PipelineStopped&) {
    // Another worker failed; its error is the one reported.
  } catch (Error& e) {
    e.add_context(where(program[i], position, i));
    record_error(std::current_exception());
  } catch (const std::exception& e) {
    record_error(std::make_exception_ptr(Error(std::string(e.what()) + "\n  " + where(program[i], position, i))));
  } catch (...) {
    record_error(std::make_exception_ptr(Error("unknown exception\n  " + where(program[i], position, i))));
  }
}

void PipelineRun::record_error(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::move(error);
  }
  mailbox_.stop();
}

void PipelineRun::issue(const Instruction& ins, int position) {
  StepRecorder* rec = settings_.recorder;
  const bool compute =
      ins.op == Op::forward || ins.op == Op::backward || (ins.op == Op::optimizer_step && !parts_.optimizers.empty());
  const bool copy = (ins.op == Op::send_activation || ins.op == Op::send_gradient) && routing_.local(ins.peer) &&
                    stage(ins.stage).device() != stage(ins.peer).device();  // same device: nothing to time
  if (ins.op == Op::optimizer_step && !syncs_.empty()) {
    // A hybrid group: the stage's gradients become the groups' mean first (not optimiser time).
    syncs_[static_cast<size_t>(ins.stage)]->finish();
    if (rec != nullptr) record_collectives(ins.stage, position);
  }
  if (rec == nullptr || (!compute && !copy)) return dispatch(ins);
  TraceEvent event = instruction_trace_event(ins, *schedule_);
  if (copy) {
    std::pair<TraceMark, TraceMark> marks;
    send(ins, &marks);
    event.thread = rec->link_lane(ins.stage, ins.peer);
    return rec->add(position, std::move(event), std::move(marks.first), std::move(marks.second));
  }
  const Stream& stream = stage(ins.stage).context().stream();
  TraceMark start = rec->mark(stream);
  dispatch(ins);
  TraceMark end = rec->mark(stream);
  event.thread = rec->compute_lane(position);
  rec->add(position, std::move(event), std::move(start), std::move(end));
}

void PipelineRun::record_collectives(int s, int position) {
  StepRecorder& rec = *settings_.recorder;
  const std::vector<StageSync::Collective> collectives = syncs_[static_cast<size_t>(s)]->collectives();
  for (size_t k = 0; k < collectives.size(); ++k) {
    const StageSync::Collective& c = collectives[k];
    if (!c.ran.started || !c.ran.finished) continue;  // a backend that does not time its operations
    TraceEvent event;
    event.name = "all-reduce s" + std::to_string(s) + (collectives.size() > 1 ? " b" + std::to_string(k) : "");
    event.category = "allreduce";
    event.process = kMeasuredProcess;
    event.thread = rec.communication_lane(s);
    event.args = {{"stage", s}, {"bytes", c.bytes}, {"strategy", grad_sync_name(parts_.group_sync.strategy)}};
    rec.add(position, std::move(event), rec.host_mark(*c.ran.started), rec.host_mark(*c.ran.finished));
  }
}

void PipelineRun::dispatch(const Instruction& ins) {
  switch (ins.op) {
    case Op::forward:
      return forward(ins.stage, ins.micro_batch);
    case Op::backward:
      return backward(ins.stage, ins.micro_batch);
    case Op::send_activation:
    case Op::send_gradient:
      return send(ins);
    case Op::recv_activation:
    case Op::recv_gradient:
      return recv(ins);
    case Op::all_reduce:
      // One group (no replicas) has nothing to reduce.
      if (!syncs_.empty()) syncs_[static_cast<size_t>(ins.stage)]->all_reduce();
      return;
    case Op::optimizer_step:
      return optimizer_step(ins.stage);
  }
}

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
      in[k] = on_device_of(batches_.inputs[static_cast<size_t>(mb)][static_cast<size_t>(source.graph_input)], ctx);
    }
    BATON_CHECK(in[k].defined(), "input '", parts_.graph.value(names[k]).name, "' from stage ", source.producer_stage,
                " has not been received (no recv_activation before this forward)");
  }
  std::vector<Tensor>& out = state.outputs[static_cast<size_t>(mb)];
  ctx.set_check_tag(mb);  // a deferred check failure (bad labels) names the micro-batch
  out = st.executor().forward(ctx, in, state.tapes[static_cast<size_t>(mb)], settings_.mode,
                              micro_batch_seed(settings_.seed, mb));
  in.assign(in.size(), Tensor());  // the tape keeps what backward (or recomputation) needs
  if (settings_.mode == Mode::train) {
    if (routing_.computes_loss(s)) state.losses[static_cast<size_t>(mb)] = out[routing_.loss_output()];
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
  if (routing_.computes_loss(s)) {
    // The loss is a mean over the micro-batch: scaled by n_m / N, the micro-batch gradients sum to
    // the whole batch's. This is the only place the 1/M scaling happens.
    const Tensor& loss = state.losses[static_cast<size_t>(mb)];
    Tensor seed = Tensor::empty(loss.shape(), loss.dtype(), ctx);
    seed.fill(batches_.loss_scale(mb), ctx.stream());
    grads[routing_.loss_output()] = seed;
  }
  const bool last = ++state.backwards_done == backwards_expected_[static_cast<size_t>(s)];
  ctx.set_check_tag(mb);
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
