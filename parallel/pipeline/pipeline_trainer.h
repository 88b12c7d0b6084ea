// PipelineTrainEngine: the Trainer's steps through a pipeline (one stage per device or stream), or
// through G such pipelines training data parallel (the hybrid, HybridExecutor), without the host
// waiting for the devices; evaluation through group 0's stages (forward only), checkpoints gathered
// from group 0's stage stores, step timings and the measured timeline of the first steps. See
// docs/training.md ("Pipelines") and docs/hybrid.md.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "parallel/pipeline/hybrid_executor.h"
#include "parallel/pipeline/pipeline_executor.h"
#include "parallel/pipeline/step_timer.h"
#include "parallel/replicas/replicated_train_engine.h"
#include "runtime/graph/precision.h"
#include "runtime/train/evaluation.h"
#include "runtime/train/train_config.h"

namespace baton::parallel {

struct PipelineTrainOptions {
  std::vector<Device> devices;  // one per model stage (see stage_devices)
  // The hybrid: one device list per group (replacing `devices`), the plan's stages replicated as
  // many times; the groups' gradient synchronisation.
  std::vector<std::vector<Device>> group_devices = {};
  GradSyncStrategy grad_sync = GradSyncStrategy::bucket;
  bool unused_parameters_ready = false;
  bool recompute = false;            // every stage recomputes its forward in backward
  bool deferred_batch_norm = false;  // passed to PipelineOptions
  int trace_steps = 0;               // record the measured timeline of the first this-many steps
  std::string model = "pipeline";
  // Across processes (mpirun -np G x P): one process per (group, pipeline position), world rank
  // g P + p, its stages on devices.front(); group_devices is unused. See docs/hybrid.md.
  std::shared_ptr<comm::Communicator> world = nullptr;
  // The hybrid's model averaging instead of the gradient all-reduce (HybridOptions::averaging).
  ModelAveraging averaging = {};
  // The communicators' backend (comm/backend_table.h): auto, or one the table checks.
  comm::CommBackend comm_backend = comm::CommBackend::automatic;
  // The run's dtypes: the stages' and the whole model's parameters in its master dtype; the graph
  // must be built in its activation dtype (the default: uniform f32, the loader's images).
  PrecisionPolicy precision = {};
};

// Model stage k runs on pipeline position k mod P (P = schedule.devices), and position p on
// available[p mod available.size()]: stages beyond the devices share them, each on its own stream.
std::vector<Device> stage_devices(const Schedule& schedule, int num_stages, const std::vector<Device>& available);

class PipelineTrainEngine final : public ReplicatedTrainEngine {
 public:
  // Checkpoints are in the single-device format (tensors by name, gathered from the stage stores and
  // optimisers), so a pipelined run resumes with any split or on one device, and the other way round.
  PipelineTrainEngine(const Graph& graph, const TrainConfig& config, Plan plan, Schedule schedule,
                      PipelineTrainOptions options);
  ~PipelineTrainEngine() override;

  // The first stage this process runs (stage 0 in one process).
  Context& input_context() override;
  void initialize(uint64_t seed) override { hybrid_->initialize(seed); }
  // Issues the step: every stage waits for the batch on stage 0's stream through an event, and the
  // loss comes back asynchronously (the host does not wait for the devices).
  PendingLoss step(const data::Batch& batch, uint64_t seed, double lr) override;
  EvalResult evaluate(const data::Dataset& test, int64_t batch_size, int workers) override;
  std::string save_checkpoint(CheckpointManager& manager, const CheckpointState& state) override;
  CheckpointState load_checkpoint(const std::string& dir) override;
  // Validated and read as on one device (into a whole-model store on the host), then copied into
  // each stage's parameters and buffers by name.
  // (Across processes, this process's share of each batch is its group's rows; world rank 0 writes.)
  void load_weights(const std::string& safetensors_path) override;

  // Group 0's pipeline (the only one without groups; across processes this process's group), and
  // all of them.
  PipelineExecutor& executor() { return hybrid_->group(std::max(0, hybrid_->local_group())); }
  HybridExecutor& groups() { return *hybrid_; }
  // The time of every step so far on the devices (StepTimer: from the stage streams reaching the
  // step to the last of them finishing it); waits for the steps still running.
  const std::vector<double>& step_ms() { return timer_.step_ms(); }
  // The median of step_ms() after the first step (the first when there is only one; 0 with none).
  double measured_step_ms();

 private:
  // One per stage (a replicated stage's first replica): every parameter in exactly one shard.
  std::vector<CheckpointShard> shards(int group = 0);
  // Replicated stages: the first replica's parameters, buffers and optimiser state into the others.
  static void copy_first_replicas(PipelineExecutor& pipe);
  std::vector<std::pair<int, int>> local_stages();  // (group, stage) of every stage this process runs
  // Across processes (pipeline_trainer_processes.cc): evaluation through group 0's processes, the
  // result sent from the process computing the prediction to every other; checkpoints gathered into
  // a whole model on the host (WholeModel) and written by world rank 0; loads read by every process.
  bool across_processes() const { return options_.world != nullptr; }
  EvalResult evaluate_across_processes(const data::Dataset& test, int64_t batch_size, int workers);
  std::string save_across_processes(CheckpointManager& manager, const CheckpointState& state,
                                    const std::vector<CheckpointExtraFile>& extras);
  CheckpointState load_across_processes(const std::string& dir);
  void load_weights_across_processes(const std::string& safetensors_path);
  std::vector<EvalPiece> eval_pieces(const data::Batch& batch, const PipelineOutputs& result);

  const Graph& graph_;
  std::unique_ptr<HybridExecutor> hybrid_;
  PipelineTrainOptions options_;
  nlohmann::json optimizer_config_;  // the whole model's optimiser, for checkpoints across processes
  StepTimer timer_;
};

}  // namespace baton::parallel
