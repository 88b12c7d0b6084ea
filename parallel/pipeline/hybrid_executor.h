// HybridExecutor: G groups, each running the whole model as the same S-stage pipeline on its own
// devices, train on disjoint shares of every batch; stage s of every group forms one communicator,
// and the schedule's all_reduce instructions average each stage's gradients over the groups (by
// buckets during the last backward, or as one partition after it). The groups run in this process,
// each on its own thread. See docs/hybrid.md.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "parallel/pipeline/pipeline_executor.h"
#include "parallel/replicas/replica_averaging.h"
#include "parallel/replicas/replica_threads.h"
#include "runtime/train/checkpoint.h"

namespace baton::parallel {

struct HybridOptions {
  PipelineOptions pipeline;  // every group's (its group_sync is filled in by the executor)
  GradSyncStrategy grad_sync = GradSyncStrategy::bucket;
  BucketOptions buckets;
  GradientSyncOptions sync;
  // Model averaging instead of the gradient all-reduce (G >= 2 groups, every stage replicated G
  // times): each group steps on its own gradients, and every stage's replicas across the groups
  // meet every `averaging.every` steps (ReplicaAveraging over the stage's communicator, rank = group).
  ModelAveraging averaging;
};

class HybridExecutor {
 public:
  // `plan`: every stage has G replicas (G equal groups), replica g of stage s runs on devices[g][s];
  // its M micro-batches are the step's, G | M. A plan with unequal replication runs as one group
  // (devices: one list, a device per stage replica in stage order) whose PipelineExecutor runs each
  // replica as a unit (pipeline_executor.h). `schedule`: the
  // step's, made with the plan's replicas (plan_schedule); group g runs group_schedule(schedule, g),
  // M / G micro-batches. Group g trains on rows [g B / G, (g + 1) B / G) of each batch of B rows, its
  // micro-batches keyed micro_batch_seed(seed, g M / G + m): the single-device step over the batch in
  // M micro-batches. (The schedule numbers group g's micro-batches g, g + G, ...; the executor
  // numbers them g M / G + m: the same work, renumbered.)
  HybridExecutor(const Graph& graph, const Plan& plan, const Schedule& schedule,
                 std::vector<std::vector<Device>> devices, HybridOptions options = {});
  // Across processes (G x P processes, P = schedule.devices positions per group): world rank r runs
  // position r mod P of group r / P, its stages on `device`. Two communicators are split from
  // `world` (a host backend: mpi under mpirun): the group's pipeline (one rank per position:
  // activations and gradients) and, for G > 1, the position's across the groups (its stages'
  // gradients, the loss). On a GPU `device`, activations, gradients and the gradient all-reduces go
  // through NCCL communicators bootstrapped from those (pipeline_links.h). Every process calls
  // step with the whole batch; each runs its group's share through its stages and returns the
  // batch's loss. A failing process leaves the others waiting until the communicators' timeout,
  // which ends the job (mpi) or fails their steps (docs/hybrid.md, "Across processes"). A plan with
  // unequal replication runs as one pipeline of stage replicas (units), world rank u running unit u
  // (stage 0's replicas first, then stage 1's, ...): local_group() 0 on every process.
  HybridExecutor(const Graph& graph, const Plan& plan, const Schedule& schedule, comm::Communicator& world,
                 Device device, HybridOptions options = {});
  ~HybridExecutor();
  HybridExecutor(const HybridExecutor&) = delete;
  HybridExecutor& operator=(const HybridExecutor&) = delete;

  int groups() const { return groups_count_; }
  // Group g's pipeline; across processes only this process's group (local_group()), whose
  // executor holds this process's stages only.
  PipelineExecutor& group(int g);
  // Across processes: this process's group; in one process: -1.
  int local_group() const { return local_group_; }

  // Every group from the same whole-model values.
  void initialize(uint64_t seed);
  void load_parameters(const ParamStore& whole);
  // Group 0's parameters and buffers (BatchNorm running statistics are each group's own).
  void store_parameters(ParamStore& whole, Context& ctx);

  // One training step of every group (each on its own thread); the mean loss of the batch. The
  // first group to fail (in time) has its error rethrown, naming the group; the stages'
  // communicators are then aborted (in-process backends), so that the other groups stop at once
  // instead of at their timeout, and the executor is not usable for further steps.
  double step(const std::vector<Tensor>& inputs, const StepOptions& options = {});
  // The same without waiting for the devices: the loss, the mean of the groups', on its way.
  PendingLoss start_step(const std::vector<Tensor>& inputs, const StepOptions& options = {});
  // Across processes: the step with this process's group's share of the batch (rows [g B / G,
  // (g + 1) B / G), as a data loader sharded by group cuts them), returning the batch's loss.
  PendingLoss start_group_step(const std::vector<Tensor>& share, const StepOptions& options);
  // Forward only through group 0 (every group holds the same parameters; across processes only
  // group 0's processes call it).
  PipelineOutputs evaluate(const std::vector<Tensor>& inputs) { return group(0).evaluate(inputs); }

  // Model averaging (hybrid_executor_averaging.cc). Whether the groups average, how often their
  // stages have met, and the bytes this process's first group's stages have sent in the exchange.
  bool averaging() const { return averaging_.active(); }
  int64_t averaging_meetings() const;
  int64_t averaging_bytes_sent() const;
  // Before an evaluation or a checkpoint: every stage of every group holds the agreed model (the
  // groups' mean, BMUF's global model, EASGD's centre); leave_agreement() lets the groups go on from
  // their own parameters. Collective (every process, across processes). Nothing without averaging.
  void enter_agreement();
  void leave_agreement();
  // The groups hold the same parameters (initialised, loaded): the averaging state starts from them.
  void restart_averaging();
  // During an agreement: averaging.safetensors of every group's stages (each replica's own
  // parameters and optimiser state, each stage's shared state); none without averaging. Across
  // processes collective, gathered to world rank 0 (the others return none).
  std::vector<CheckpointExtraFile> averaging_checkpoint_files();
  // Resuming at step `steps`: the averaging state from checkpoint `dir` (checked in full against
  // this run), or a restart when it holds none.
  void load_averaging_state(const std::string& dir, int64_t steps);

 private:
  // Runs fn(i, pipeline) for every group this process runs, i its index among them (in one process
  // the group, on the groups' threads).
  void on_local_groups(const std::function<void(int, PipelineExecutor&)>& fn);
  // With model averaging (checked: G >= 2): every local stage's ReplicaAveraging, made collectively.
  void start_averaging(const ModelAveraging& averaging);
  // The step options of a group's step `steps_`: its gradients all-reduced, or not (averaging).
  StepOptions group_step_options(StepOptions options, int group) const;
  // Across processes: averaging_checkpoint_files() gathered to world rank 0 (the others: none).
  std::vector<CheckpointExtraFile> gather_averaging_files();
  // After local group i's step `steps_`: its stages meet the other groups' when the period says so.
  void after_group_step(int i);

  // Runs fn(g) for every group, each on a worker thread; rethrows the first failure in time.
  void on_groups(const std::function<void(int)>& fn);

  // In one process: the stage s communicators of every group, g within s. Across processes: none.
  void make_stage_communicators(const std::vector<std::vector<Device>>& devices, comm::CommBackend backend,
                                std::vector<std::vector<std::shared_ptr<comm::Communicator>>>& by_group);
  void add_group(const Graph& graph, const Plan& plan, const Schedule& schedule, int g, std::vector<Device> devices,
                 const HybridOptions& options, std::vector<std::shared_ptr<comm::Communicator>> stage_comms,
                 std::shared_ptr<comm::Communicator> processes);

  int groups_count_ = 0;
  int local_group_ = -1;                                            // across processes
  std::vector<std::unique_ptr<PipelineExecutor>> groups_;           // across processes: this process's group only
  std::vector<std::shared_ptr<comm::Communicator>> communicators_;  // in one process: every group's, every stage's
  // Across processes: this position's, over the groups (G > 1), on the host (the loss; the stages'
  // gradients too on CPUs, through an NCCL communicator bootstrapped from it on GPUs).
  std::shared_ptr<comm::Communicator> across_;
  // Per local group: each stage's communicator over the groups (none for one group).
  std::vector<std::vector<std::shared_ptr<comm::Communicator>>> stage_comms_;
  ModelAveraging averaging_;
  std::vector<std::vector<std::unique_ptr<ReplicaAveraging>>> stage_averaging_;  // [local group][stage]
  int64_t steps_ = 0;                                                            // steps run (the period)
  // In one process: the groups' threads (group 0 on the caller's), kept across steps.
  ReplicaThreads threads_{"hybrid group", FailureBlame::first_in_time};
};

// Splits a plan whose stages all have G replicas into group g's plan: one replica per stage, on the
// device of replica g, a batch of plan.batch / G in plan.micro_batches / G micro-batches. Unequal
// replication is an error naming the
// stage (its semantics across groups is not defined here; see docs/hybrid.md).
int plan_groups(const Plan& plan);
Plan group_plan(const Plan& plan, int group);

}  // namespace baton::parallel
