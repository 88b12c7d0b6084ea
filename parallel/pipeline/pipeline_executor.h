// PipelineExecutor: runs a Plan for real. Each stage is a sub-graph with its own ParamStore and
// Executor on its own device (a GPU, a CPU virtual device, or a stream of a shared GPU); the
// routing says how stages connect. Each step or evaluation is a PipelineRun (pipeline_run.h): one
// host worker per pipeline position issues that position's schedule instruction list, and
// micro-batches and their gradients move between stages through event-ordered transfers.
// See docs/pipeline.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "parallel/comm/backend_table.h"
#include "parallel/pipeline/micro_batches.h"
#include "parallel/pipeline/pipeline_run.h"
#include "parallel/pipeline/pipeline_trace.h"
#include "parallel/pipeline/replica_units.h"
#include "parallel/pipeline/routing.h"
#include "parallel/pipeline/stage.h"
#include "parallel/pipeline/stage_sync.h"
#include "parallel/plan/plan.h"
#include "parallel/plan/schedule.h"
#include "runtime/core/worker_threads.h"
#include "runtime/graph/precision.h"

namespace baton {
class Optimizer;
}

namespace baton::parallel {

struct PipelineOptions {
  DType dtype = kDefaultDType;  // parameters: the precision policy's master dtype (the graph's values agree)
  std::vector<bool> recompute;  // per stage; empty: no stage recomputes
  // BatchNorm running statistics updated once per step from the whole mini-batch (all micro-
  // batches' statistics merged, committed at each stage's optimizer_step) instead of once per
  // micro-batch. Normalisation still uses each micro-batch's own statistics. See docs/pipeline.md.
  bool deferred_batch_norm = false;
  // Optimiser config for make_optimizer ({"type": "sgd", ...}): each stage gets its own over its
  // ParamStore and the schedule's optimizer_step runs it. Null: optimizer_step does nothing and
  // the caller updates the stage stores (stage_params) after step().
  nlohmann::json optimizer;
  std::string model = "pipeline";  // names the structural profile in errors
  // The hybrid (HybridExecutor): this pipeline is one of several groups, and the schedule's
  // all_reduce instructions synchronise each stage's gradients with the other groups'.
  GroupSync group_sync;
  // A pipeline across processes: one rank per pipeline position; this process builds and runs only
  // the stages of position processes->rank(), and activations and gradients to and from the other
  // positions go through this communicator (remote_transfer.h). Null: every stage runs here.
  std::shared_ptr<comm::Communicator> processes;
  // The backend of the communicators the executor makes (gradients of replicated stages, links
  // between processes): comm/backend_table.h's choice for the stages' devices, or the one it checks.
  comm::CommBackend comm_backend = comm::CommBackend::automatic;
};

struct StepOptions {
  uint64_t seed = 0;          // the step's seed; micro-batch m's random layers use micro_batch_seed(seed, m)
  double lr = 0.0;            // learning rate for the optimiser (when PipelineOptions::optimizer is set)
  bool record_trace = false;  // time every instruction of this step (take_trace() returns them)
  // start_step: the stream the inputs were written on, not waited for by the host. Every stage's
  // stream waits for it (an event) and keeps the inputs' memory until it is past its reads. Unset:
  // the inputs are ready to be read.
  std::optional<Stream> inputs_stream = std::nullopt;
  // False: the stages' gradients stay this group's own (the hybrid's model averaging between its
  // meetings); the schedule's all_reduce instructions do nothing.
  bool sync_gradients = true;
};

class PipelineExecutor {
 public:
  // `devices`: one per model stage (stages sharing a device get a stream each). The plan's stage
  // nodes are indices into graph.topological_order() (as profile_structure numbers them). The
  // plan is validated, and the schedule against the plan's stage consumers, before anything runs.
  // Replicated stages (outside a hybrid group, one stage per position): `schedule`
  // is the step's with the plan's replicas (plan_schedule), `devices` one per replica in stage order
  // (stage 0's replicas, then stage 1's, ...). Each replica is a unit: a stage of this executor
  // (num_stages() counts units) with its own worker, running its stage's program for the micro-
  // batches it takes (m mod r = its replica); a micro-batch's activations and gradients go between
  // the units that take it, and a stage's units sum their gradients at its all_reduce (GroupSync's
  // strategy, bucket or partition). Across processes, process u runs unit u (`devices` still one per
  // unit; only this process's is used), and the loss is summed over the processes. See docs/hybrid.md.
  PipelineExecutor(const Graph& graph, Plan plan, Schedule schedule, std::vector<Device> devices,
                   PipelineOptions options = {});
  ~PipelineExecutor();
  PipelineExecutor(const PipelineExecutor&) = delete;
  PipelineExecutor& operator=(const PipelineExecutor&) = delete;

  int num_stages() const { return static_cast<int>(stages_.size()); }  // units with replicated stages
  // With replicated stages: unit u's plan stage and replica (otherwise u and 0).
  int plan_stage_of(int u) const { return units_.stage.at(static_cast<size_t>(u)); }
  int replica_of(int u) const { return units_.replica.at(static_cast<size_t>(u)); }
  bool first_replica(int u) const { return replica_of(u) == 0; }
  // Whether some plan stage has more than one replica (then num_stages() counts units).
  bool replicated() const { return units_.count() > plan_.num_stages(); }
  // Whether this process runs stage s (always, unless the pipeline spans processes).
  bool local(int s) const { return stages_.at(static_cast<size_t>(s)) != nullptr; }
  // Stage s, which must be local.
  PipelineStage& stage(int s);
  ParamStore& stage_params(int s) { return stage(s).params(); }
  // Stage s's optimiser (PipelineOptions::optimizer set, the stage local), else null.
  Optimizer* stage_optimizer(int s) {
    return optimizers_.empty() ? nullptr : optimizers_.at(static_cast<size_t>(s)).get();
  }
  // The pipeline position running stage s (its rank in PipelineOptions::processes).
  int position_of(int s) const { return stage_positions_.at(static_cast<size_t>(s)); }
  // The communicator of a pipeline across processes, else null.
  comm::Communicator* processes() const { return options_.processes.get(); }
  const Schedule& schedule() const { return schedule_; }
  const PipelineRouting& routing() const { return *routing_; }

  // Initial values exactly as a whole-model ParamStore::initialize(ctx, seed) gives them (a
  // temporary whole-model store on cpu:0 is initialised and copied by name).
  void initialize(uint64_t seed);
  // Copies parameters and buffers by name from a whole-model store.
  void load_parameters(const ParamStore& whole);
  // The other way: every stage's parameters and buffers by name into `whole` (a store over the
  // whole graph, any device), finished when this returns.
  void store_parameters(ParamStore& whole, Context& ctx);

  // Across processes (PipelineOptions::processes) every process of the pipeline calls these
  // together with the same inputs; each runs its own stages, and step returns the batch's loss on
  // every process (sent from the loss stage's).
  //
  // One training step: zeroes the stage gradients, splits each graph input (one tensor per
  // graph.inputs() entry, ready to be read) into M views along dimension 0, runs the schedule and
  // returns the mean loss, every stage stream synchronised. Parameter gradients equal those of the
  // whole batch in one piece: micro-batch m's loss gradient is n_m / N. Errors in any worker stop
  // all of them and are rethrown here naming the stage and micro-batch.
  double step(const std::vector<Tensor>& inputs, const StepOptions& options = {});
  // The same step without waiting for the devices (the trainer's): returns once every worker has
  // issued its instructions, with the mean loss on its way to the host (PendingLoss::value() waits
  // for it and raises the step's deferred device-check failures). A traced step synchronises.
  PendingLoss start_step(const std::vector<Tensor>& inputs, const StepOptions& options = {});

  // Forward only, in eval mode (running statistics, no dropout, nothing kept for backward): splits
  // each graph input into min(M, batch) micro-batches and runs the forward-only schedule
  // (make_forward_schedule: each position runs its stages micro-batch by micro-batch); returns every
  // graph output per micro-batch, ready when this returns. Gradients, deferred statistics and the
  // optimisers are left alone. Errors as for step; the stages' deferred device-check failures (bad
  // labels) are raised before returning.
  PipelineOutputs evaluate(const std::vector<Tensor>& inputs);

  // Synchronises every stage's stream and raises the device-check failures recorded on it since the
  // last report (kernels/deferred_checks.h): before a checkpoint is written.
  void raise_deferred_errors();

  // The measured timeline of the steps run with StepOptions::record_trace since the last call
  // (process 1, "measured"; times in us from the first traced step's start), and its lanes: one per
  // pipeline position's compute, one per link. See docs/pipeline.md.
  std::vector<TraceEvent> take_trace();
  std::vector<TraceLane> trace_lanes();
  // The steady-clock time of the trace's 0 (after a traced step).
  std::chrono::steady_clock::time_point trace_origin() { return recorder().origin(); }

 private:
  PipelineParts parts() {
    return {graph_,       *routing_, stages_, optimizers_, sync_, buckets_, stage_positions_, options_.processes.get(),
            links_.get(), &workers_};
  }
  // Across processes: the step's loss on every process, the sum of the processes' parts (`loss`, or
  // none where no loss unit runs; the loss stage's replicas may be in several processes, and a sum
  // with zeros is exact, so one process's part arrives unchanged).
  PendingLoss share_loss(PendingLoss loss);
  void build_replicated(std::vector<Device> devices);  // the constructor, with replicated stages
  void build_syncs_and_optimizers();
  StepRecorder& recorder();  // created by the first traced step
  void synchronize();        // every stage's stream
  void order_inputs(const std::vector<Tensor>& inputs, const Stream& written_on);

  const Graph& graph_;
  Plan plan_;
  Schedule schedule_;
  PipelineOptions options_;
  std::vector<std::vector<int>> stage_consumers_;       // the plan's (stage_consumers)
  ReplicaUnits units_;                                  // one per stage without replicas
  GroupSync sync_;                                      // the groups' (hybrid), or the replicas' of a stage
  std::vector<std::unique_ptr<PipelineStage>> stages_;  // per unit; null where another process runs it
  std::vector<int> stage_positions_;                    // [stage]: its pipeline position
  std::unique_ptr<const PipelineRouting> routing_;
  std::unique_ptr<const PipelineLinks> links_;             // across processes: to the other positions
  std::vector<std::unique_ptr<Optimizer>> optimizers_;     // one per stage, or none
  std::vector<std::unique_ptr<GradientBuckets>> buckets_;  // per stage: the hybrid's bucket strategy
  std::unique_ptr<StepRecorder> recorder_;
  std::vector<std::unique_ptr<LossReadback>> losses_;  // one per unit of the loss stage
  std::optional<Event> inputs_ready_;                  // recorded on StepOptions::inputs_stream, reused
  WorkerThreads workers_;                              // the positions' threads in one process, kept across steps
};

}  // namespace baton::parallel
