// PipelineRun: everything of one PipelineExecutor::step or evaluate — the micro-batches, each
// stage's per-micro-batch state, the mailbox, the results and the first error — and the
// interpreter of a schedule: one worker thread per pipeline position issues that position's
// instruction list, calling the methods below. Where they live:
//   pipeline_run.cc           workers, errors, dispatch and tracing; forward, backward and
//                             optimizer_step of one stage
//   pipeline_run_transfer.cc  send and recv of activations and gradients
//   pipeline_run_results.cc   the mean loss and the evaluation's outputs
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "parallel/pipeline/mailbox.h"
#include "parallel/pipeline/micro_batches.h"
#include "parallel/pipeline/pipeline_trace.h"
#include "parallel/pipeline/remote_transfer.h"
#include "parallel/pipeline/routing.h"
#include "parallel/pipeline/stage.h"
#include "parallel/pipeline/stage_sync.h"
#include "parallel/plan/schedule.h"
#include "runtime/core/worker_threads.h"
#include "runtime/train/pending_loss.h"

namespace baton {
class Optimizer;
}

namespace baton::parallel {

// What PipelineExecutor::evaluate returns: every graph output of every micro-batch.
struct PipelineOutputs {
  std::vector<std::vector<Tensor>> outputs;  // [graph output][micro-batch], on the producing stage's device
  std::vector<int> output_stage;             // [graph output]: the stage that produced it
  std::vector<int64_t> micro_batch_sizes;    // samples in each micro-batch
};

// The executor's long-lived parts a run works on (owned by the PipelineExecutor, outliving the run).
struct PipelineParts {
  const Graph& graph;
  const PipelineRouting& routing;
  std::vector<std::unique_ptr<PipelineStage>>& stages;
  std::vector<std::unique_ptr<Optimizer>>& optimizers;           // one per stage, or none
  const GroupSync& group_sync;                                   // the hybrid: the stages of the other groups
  const std::vector<std::unique_ptr<GradientBuckets>>& buckets;  // per stage (bucket strategy), or none
  const std::vector<int>& stage_positions;                       // [stage]: its pipeline position
  comm::Communicator* processes = nullptr;                       // a pipeline across processes, else null
  const PipelineLinks* links = nullptr;                          // its links to the other positions
  WorkerThreads* workers = nullptr;                              // in one process: runs the positions
};

// How a run goes: train (forward keeps tapes, backward, optimiser step) or eval (forward only).
struct RunSettings {
  Mode mode = Mode::train;
  uint64_t seed = 0;                 // the step's seed (micro_batch_seed per micro-batch)
  double lr = 0.0;                   // for the stages' optimisers
  StepRecorder* recorder = nullptr;  // set: every instruction's start and end are recorded
  bool sync_gradients = true;        // false: the group's all_reduce instructions do nothing (model averaging)
};

class PipelineRun {
 public:
  PipelineRun(const PipelineParts& parts, MicroBatches batches, RunSettings settings);
  PipelineRun(const PipelineRun&) = delete;
  PipelineRun& operator=(const PipelineRun&) = delete;

  // Runs the schedule's programs, one worker thread per pipeline position, and returns when every
  // worker is done. The first failure stops every worker; it is rethrown here, naming the stage
  // and micro-batch, once every stage's stream has been synchronised.
  void execute(const Schedule& schedule);
  // After a training run: the batch's mean loss (the micro-batch losses weighted by n_m / N), read
  // back on the loss stage's stream (one readback per unit of a replicated loss stage, added as
  // needed) without waiting for it.
  PendingLoss mean_loss(std::vector<std::unique_ptr<LossReadback>>& readbacks);
  // After an evaluation: every graph output of every micro-batch.
  PipelineOutputs take_outputs();

 private:
  // What one stage holds during the run, per micro-batch.
  struct StageState {
    std::vector<Tape> tapes;
    std::vector<std::vector<Tensor>> inputs;        // per executor input (received or from the batch)
    std::vector<std::vector<Tensor>> outputs;       // forward's, until sent
    std::vector<std::vector<Tensor>> output_grads;  // summed over the consumers that sent one
    std::vector<std::vector<Tensor>> input_grads;   // backward's, until sent
    std::vector<Tensor> losses;                     // loss stage only
    std::vector<int> activation_sends_left;         // consumers not yet sent to
    std::vector<int> gradient_sends_left;           // producers not yet sent to
    int backwards_done = 0;
  };

  // pipeline_run.cc
  void run_position(const std::vector<Instruction>& program, int position);
  void issue(const Instruction& ins, int position);  // with its trace event when recording
  void dispatch(const Instruction& ins);
  void record_error(std::exception_ptr error);
  // A hybrid group's traced step: the stage's all-reduces on its communication lane.
  void record_collectives(int s, int position);
  void forward(int s, int mb);
  void backward(int s, int mb);
  void optimizer_step(int s);
  // pipeline_run_transfer.cc
  void send(const Instruction& ins, std::pair<TraceMark, TraceMark>* marks = nullptr);
  void recv(const Instruction& ins);

  PipelineStage& stage(int s) { return *parts_.stages[static_cast<size_t>(s)]; }
  StageState& state(int s) { return states_[static_cast<size_t>(s)]; }

  PipelineParts parts_;
  const PipelineRouting& routing_;
  MicroBatches batches_;
  RunSettings settings_;
  const Schedule* schedule_ = nullptr;  // the one execute() runs
  Mailbox mailbox_;
  std::optional<RemoteTransfers> remote_;          // a pipeline across processes
  std::vector<StageState> states_;                 // each touched only by the worker of its position
  std::vector<int> backwards_expected_;            // per stage: backwards in the running schedule
  std::vector<std::unique_ptr<StageSync>> syncs_;  // per stage, training runs of a hybrid group
  std::vector<std::vector<Tensor>> results_;       // eval: [graph output][micro-batch]
  std::mutex error_mutex_;
  std::exception_ptr error_;  // the first worker failure
};

}  // namespace baton::parallel
