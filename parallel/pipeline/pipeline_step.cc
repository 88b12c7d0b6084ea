// The training step of the pipeline engines, in the order a step runs them: the Trainer's step
// (PipelineTrainEngine), the split over the hybrid's groups (HybridExecutor) and each group's
// pipeline step (PipelineExecutor), which cuts the micro-batches and runs them as one PipelineRun.
#include <string>

#include "parallel/pipeline/hybrid_executor.h"
#include "parallel/pipeline/micro_batches.h"
#include "parallel/pipeline/pipeline_run.h"
#include "parallel/pipeline/pipeline_trainer.h"
#include "parallel/replicas/micro_batch_seed.h"
#include "runtime/core/error.h"
#include "runtime/data/batch.h"
#include "runtime/train/graph_contract.h"

namespace baton::parallel {

PendingLoss PipelineTrainEngine::step(const data::Batch& batch, uint64_t seed, double lr) {
  std::vector<Stream> streams;
  for (auto& [g, s] : local_stages()) streams.push_back(hybrid_->group(g).stage(s).context().stream());
  const bool trace = static_cast<int>(timer_.steps()) < options_.trace_steps;
  timer_.begin(streams);
  // The loader wrote the batch on the first stage's stream; other stages (other streams) wait for it there.
  const StepOptions step_options{.seed = seed, .lr = lr, .record_trace = trace, .inputs_stream = streams[0]};
  const std::vector<Tensor> inputs = batch_inputs(graph_, graph_.inputs(), batch);
  PendingLoss loss =
      across_processes() ? hybrid_->start_group_step(inputs, step_options) : hybrid_->start_step(inputs, step_options);
  timer_.end(streams);
  return loss;
}

void HybridExecutor::on_groups(const std::function<void(int)>& fn) {
  threads_.run(groups(), fn, [&](int g) {
    // The other groups would wait for this one in their next all-reduce until the timeout.
    const std::string reason = "hybrid group " + std::to_string(g) + " failed";
    for (const auto& communicator : communicators_) communicator->abort_in_process(reason);
  });
}

StepOptions HybridExecutor::group_step_options(StepOptions options, int group) const {
  // micro_batch_seed(micro_batch_seed(s, g M), m) == micro_batch_seed(s, g M + m).
  options.seed = micro_batch_seed(options.seed, group * groups_.front()->schedule().micro_batches);
  options.sync_gradients = averaging_.synchronous_step(steps_);
  return options;
}

void HybridExecutor::after_group_step(int i) {
  if (!averaging_.active() || !averaging_.averages_after(steps_)) return;
  for (const auto& stage : stage_averaging_[static_cast<size_t>(i)]) {
    if (stage) stage->meet();  // after the stage's optimiser, on its stream
  }
}

PendingLoss HybridExecutor::start_group_step(const std::vector<Tensor>& share, const StepOptions& options) {
  BATON_CHECK(local_group_ >= 0, "start_group_step is for the hybrid across processes");
  PipelineExecutor& mine = *groups_.front();
  StepOptions step = group_step_options(options, local_group_);
  const double group_loss = mine.start_step(share, step).value();  // on every process of the group
  after_group_step(0);
  ++steps_;
  if (!across_) return PendingLoss(group_loss);
  const Stream host = Stream::create(Device::cpu());
  Tensor loss = Tensor::empty_host({1}, DType::f64);
  loss.data<double>()[0] = group_loss;
  across_->all_reduce(loss, comm::ReduceOp::mean, host)->wait();
  return PendingLoss(loss.data<double>()[0]);
}

PendingLoss HybridExecutor::start_step(const std::vector<Tensor>& inputs, const StepOptions& options) {
  const int groups = this->groups();
  for (const Tensor& input : inputs) {
    BATON_CHECK(input.rank() >= 1 && input.size(0) % groups == 0, "hybrid step: a batch of ",
                input.rank() >= 1 ? input.size(0) : 0, " rows does not split evenly over ", groups, " groups");
  }
  const std::vector<std::vector<Tensor>> shares = data::split_rows(inputs, groups, "hybrid step");
  if (local_group_ >= 0) return start_group_step(shares[static_cast<size_t>(local_group_)], options);
  std::vector<PendingLoss> losses(static_cast<size_t>(groups));
  on_groups([&](int g) {
    losses[static_cast<size_t>(g)] =
        groups_[static_cast<size_t>(g)]->start_step(shares[static_cast<size_t>(g)], group_step_options(options, g));
    after_group_step(g);
  });
  ++steps_;
  PendingLoss loss = std::move(losses.front());
  losses.erase(losses.begin());
  if (!losses.empty()) loss.average_with(std::move(losses));
  return loss;
}

double HybridExecutor::step(const std::vector<Tensor>& inputs, const StepOptions& options) {
  PendingLoss loss = start_step(inputs, options);
  for (auto& group : groups_) {
    for (int s = 0; s < group->num_stages(); ++s) {
      if (group->local(s)) group->stage(s).context().synchronize();
    }
  }
  return loss.value();
}

void PipelineExecutor::order_inputs(const std::vector<Tensor>& inputs, const Stream& written_on) {
  bool host_reader = false;  // a CPU stage copies CUDA inputs on a stream of its own
  for (auto& stage : stages_) host_reader = host_reader || (stage && stage->device().is_cpu());
  if (written_on.device().is_cpu() || host_reader) return written_on.synchronize();
  if (!inputs_ready_ || inputs_ready_->device() != written_on.device()) {
    inputs_ready_.emplace(written_on.device(), /*timing=*/false);
  }
  inputs_ready_->record(written_on);
  for (auto& stage : stages_) {
    if (!stage) continue;
    const Stream& stream = stage->context().stream();
    if (stream == written_on) continue;
    stream.wait(*inputs_ready_);
    for (const Tensor& t : inputs) t.record_stream(stream);
  }
}

PendingLoss PipelineExecutor::start_step(const std::vector<Tensor>& inputs, const StepOptions& options) {
  MicroBatches batches = split_batch(graph_, inputs, schedule_.micro_batches, "step");
  if (options.inputs_stream) order_inputs(inputs, *options.inputs_stream);
  for (auto& stage : stages_) {
    if (stage) stage->start_training_step();
  }
  StepRecorder* recorder = nullptr;
  if (options.record_trace) {
    recorder = &this->recorder();
    std::vector<Stream> streams;
    for (auto& stage : stages_) {
      if (stage) streams.push_back(stage->context().stream());
    }
    recorder->begin_step(streams);
  }
  PipelineRun run(parts(), std::move(batches),
                  {.mode = Mode::train,
                   .seed = options.seed,
                   .lr = options.lr,
                   .recorder = recorder,
                   .sync_gradients = options.sync_gradients});
  run.execute(schedule_);
  // mean_loss: the part of this process's loss units (all of them in one process, none elsewhere).
  PendingLoss loss = options_.processes ? share_loss(run.mean_loss(losses_)) : run.mean_loss(losses_);
  if (recorder != nullptr) {
    synchronize();  // the trace's events are read now
    recorder->end_step();
  }
  return loss;
}

PendingLoss PipelineExecutor::share_loss(PendingLoss loss) {
  const Stream host = Stream::create(Device::cpu());
  Tensor value = Tensor::empty_host({1}, DType::f64);
  value.data<double>()[0] = loss.valid() ? loss.value() : 0.0;
  options_.processes->all_reduce(value, comm::ReduceOp::sum, host)->wait();
  return PendingLoss(value.data<double>()[0]);
}

double PipelineExecutor::step(const std::vector<Tensor>& inputs, const StepOptions& options) {
  PendingLoss loss = start_step(inputs, options);
  synchronize();
  return loss.value();
}

}  // namespace baton::parallel
