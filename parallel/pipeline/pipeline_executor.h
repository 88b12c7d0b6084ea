// PipelineExecutor: runs a Plan for real. Each stage is a sub-graph with its own ParamStore and
// Executor on its own device (a GPU, a CPU virtual device, or a stream of a shared GPU); one host
// worker per pipeline position issues that position's schedule instruction list in order, and
// micro-batches and their gradients move between stages through event-ordered transfers.
// See docs/pipeline.md.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <exception>
#include <mutex>
#include <memory>
#include <optional>
#include <vector>

#include "parallel/pipeline/mailbox.h"
#include "parallel/pipeline/pipeline_trace.h"
#include "parallel/pipeline/stage.h"
#include "parallel/pipeline/transfer.h"
#include "parallel/plan.h"
#include "parallel/schedule.h"

namespace baton {
class Optimizer;
}

namespace baton::parallel {

struct PipelineOptions {
  DType dtype = DType::f32;           // parameters (the graph's values must agree)
  std::vector<bool> recompute;        // per stage; empty: no stage recomputes
  // BatchNorm running statistics updated once per step from the whole mini-batch (all micro-
  // batches' statistics merged, committed at each stage's optimizer_step) instead of once per
  // micro-batch. Normalisation still uses each micro-batch's own statistics. See docs/pipeline.md.
  bool deferred_batch_norm = false;
  // Optimiser config for make_optimizer ({"type": "sgd", ...}): each stage gets its own over its
  // ParamStore and the schedule's optimizer_step runs it. Null: optimizer_step does nothing and
  // the caller updates the stage stores (stage_params) after step().
  nlohmann::json optimizer;
  std::string model = "pipeline";     // names the structural profile in errors
};

struct StepOptions {
  uint64_t seed = 0;  // the step's seed; micro-batch m's random layers use micro_batch_seed(seed, m)
  double lr = 0.0;    // learning rate for the optimiser (when PipelineOptions::optimizer is set)
  bool record_trace = false;  // time every instruction of this step (take_trace() returns them)
};

// The seed of micro-batch m of a step: seed + m x 0x9E3779B97F4A7C15 (m = 0: the step's seed, so
// one micro-batch draws exactly what the single-device executor draws with the step's seed).
uint64_t micro_batch_seed(uint64_t step_seed, int micro_batch);

// What PipelineExecutor::evaluate returns: every graph output of every micro-batch.
struct PipelineOutputs {
  std::vector<std::vector<Tensor>> outputs;  // [graph output][micro-batch], on the producing stage's device
  std::vector<int> output_stage;             // [graph output]: the stage that produced it
  std::vector<int64_t> micro_batch_sizes;    // samples in each micro-batch
};

class PipelineExecutor {
 public:
  // `devices`: one per model stage (stages sharing a device get a stream each). The plan's stage
  // nodes are indices into graph.topological_order() (as profile_structure numbers them). The
  // plan is validated, and the schedule against the plan's stage consumers, before anything runs.
  PipelineExecutor(const Graph& graph, Plan plan, Schedule schedule, std::vector<Device> devices,
                   PipelineOptions options = {});
  ~PipelineExecutor();
  PipelineExecutor(const PipelineExecutor&) = delete;
  PipelineExecutor& operator=(const PipelineExecutor&) = delete;

  int num_stages() const { return static_cast<int>(stages_.size()); }
  PipelineStage& stage(int s) { return *stages_.at(static_cast<size_t>(s)); }
  ParamStore& stage_params(int s) { return stage(s).params(); }
  // Stage s's optimiser (PipelineOptions::optimizer set), else null.
  Optimizer* stage_optimizer(int s) {
    return optimizers_.empty() ? nullptr : optimizers_.at(static_cast<size_t>(s)).get();
  }
  const Schedule& schedule() const { return schedule_; }

  // Initial values exactly as a whole-model ParamStore::initialize(ctx, seed) gives them (a
  // temporary whole-model store on cpu:0 is initialised and copied by name).
  void initialize(uint64_t seed);
  // Copies parameters and buffers by name from a whole-model store.
  void load_parameters(const ParamStore& whole);
  // The other way: every stage's parameters and buffers by name into `whole` (a store over the
  // whole graph, any device), finished when this returns.
  void store_parameters(ParamStore& whole, Context& ctx);

  // One training step: zeroes the stage gradients, splits each graph input (one tensor per
  // graph.inputs() entry, ready to be read) into M views along dimension 0, runs the schedule and
  // returns the mean loss. Parameter gradients equal those of the whole batch in one piece: micro-
  // batch m's loss gradient is n_m / N. Errors in any worker stop all of them and are rethrown
  // here naming the stage and micro-batch.
  double step(const std::vector<Tensor>& inputs, const StepOptions& options = {});

  // Forward only, in eval mode (running statistics, no dropout, nothing kept for backward): splits
  // each graph input into min(M, batch) micro-batches, streams them through the stages (each
  // position runs its stages micro-batch by micro-batch) and returns every graph output per
  // micro-batch, ready when this returns. Gradients, deferred statistics and the optimisers are
  // left alone. Errors as for step.
  PipelineOutputs evaluate(const std::vector<Tensor>& inputs);

  // The measured timeline of the steps run with StepOptions::record_trace since the last call
  // (process 1, "measured"; times in us from the first traced step's start), and its lanes: one per
  // pipeline position's compute, one per link. See docs/pipeline.md.
  std::vector<TraceEvent> take_trace();
  std::vector<TraceLane> trace_lanes();

 private:
  // What one stage holds during a step, per micro-batch.
  struct StageState {
    std::vector<Tape> tapes;
    std::vector<std::vector<Tensor>> inputs;        // per executor input (received or graph inputs)
    std::vector<std::vector<Tensor>> outputs;       // forward's, until sent
    std::vector<std::vector<Tensor>> output_grads;  // summed over the consumers that sent one
    std::vector<std::vector<Tensor>> input_grads;   // backward's, until sent
    std::vector<Tensor> losses;                     // loss stage only
    std::vector<int> activation_sends_left;         // per micro-batch: consumers not yet sent to
    std::vector<int> gradient_sends_left;           // per micro-batch: producers not yet sent to
    int backwards_done = 0;
  };
  void split_inputs(const std::vector<Tensor>& inputs, int micro_batches, const char* what);
  // Runs one worker thread per program (pipeline position) and rethrows the first failure.
  void run_programs(const std::vector<std::vector<Instruction>>& programs);
  void run_position(const std::vector<Instruction>& program, int position);
  void finish_run();  // drops the run's per-micro-batch state
  // Forward-only instruction lists for `micro_batches` (evaluate).
  std::vector<std::vector<Instruction>> forward_programs(int micro_batches) const;
  void execute(const Instruction& ins, int position);
  void dispatch(const Instruction& ins);
  StepRecorder& recorder();
  void forward(int s, int mb);
  void backward(int s, int mb);
  void send(const Instruction& ins, MessageKind kind, std::pair<TraceMark, TraceMark>* marks = nullptr);
  void recv(const Instruction& ins, MessageKind kind);
  // Fresh per-micro-batch state; `training` also zeroes the gradients and pending deferred updates.
  void reset_step_state(int micro_batches, bool training);
  void record_error(std::exception_ptr error);

  const Graph& graph_;
  Plan plan_;
  Schedule schedule_;
  PipelineOptions options_;
  std::vector<std::unique_ptr<PipelineStage>> stages_;
  std::vector<std::unique_ptr<Optimizer>> optimizers_;
  std::vector<std::vector<StageInput>> sources_;  // per stage, per executor input
  // links_[i][j]: the values stage i sends stage j, as (output index in i, input index in j).
  std::vector<std::vector<std::vector<std::pair<size_t, size_t>>>> links_;
  std::vector<std::vector<LinkStreams>> streams_;  // [from][to]
  // Per stage: (graph output index, stage executor output index) of the graph outputs it computes.
  std::vector<std::vector<std::pair<size_t, size_t>>> stage_graph_outputs_;
  std::vector<int> output_stage_;  // per graph output
  int loss_stage_ = -1;
  size_t loss_output_ = 0;
  Mailbox mailbox_;
  // Per-step state, each stage's touched only by the worker of its position.
  std::vector<std::unique_ptr<StageState>> state_;
  std::vector<std::vector<Tensor>> micro_inputs_;  // [graph input][micro-batch]
  std::vector<double> loss_scale_;                 // n_m / N
  StepOptions step_options_;
  Mode mode_ = Mode::train;                        // train: step(); eval: evaluate()
  std::vector<std::vector<Tensor>> results_;       // evaluate: [graph output][micro-batch]
  std::mutex error_mutex_;
  std::exception_ptr error_;  // the first worker failure of the step
  std::unique_ptr<StepRecorder> recorder_;  // created by the first traced step
  bool tracing_ = false;                    // this step records its timeline
};

}  // namespace baton::parallel
