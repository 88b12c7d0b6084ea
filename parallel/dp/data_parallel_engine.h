// DataParallelEngine: replicas of the whole model training on disjoint slices of every global batch
// and keeping identical parameters through an overlapped, bucketed gradient all-reduce
// (docs/data-parallel.md). This process runs some of the replicas, each on its own thread and
// device: all N of them (an in-process group; NCCL on GPUs), or one per process under mpirun (MPI
// communicators, or NCCL bootstrapped over MPI on GPUs).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parallel/comm/backend_table.h"
#include "parallel/comm/communicator.h"
#include "parallel/dp/step_record.h"
#include "parallel/replicas/bucket_plan.h"
#include "parallel/replicas/gradient_sync.h"
#include "parallel/replicas/model_averaging.h"
#include "parallel/replicas/replica_threads.h"
#include "parallel/replicas/replicated_train_engine.h"
#include "runtime/graph/executor.h"
#include "runtime/graph/param_store.h"
#include "runtime/graph/precision.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/optimizer.h"
#include "runtime/train/train_config.h"

namespace baton::parallel {

struct DataParallelOptions {
  std::vector<Device> devices;  // this process's replicas, one device each (at least one)
  BucketOptions buckets;
  GradientSyncOptions sync;
  // Model averaging instead of gradient all-reduce (periodic, BMUF, EASGD, post-local SGD): each
  // replica steps on its own gradients and the replicas meet every `averaging.every` steps through
  // the averaging exchange (ring or tree); evaluations and checkpoints see the agreed model.
  ModelAveraging averaging;
  // The communicators of this process's replicas (one per device, in order; consecutive ranks of
  // every process's replicas); empty: a group of devices.size() replicas in this process, of the
  // backend comm/backend_table.h chooses for threads (inproc on CPU devices, NCCL on GPUs under auto).
  std::vector<std::unique_ptr<comm::Communicator>> communicators;
  comm::CommBackend comm_backend = comm::CommBackend::automatic;
  // The run's dtypes: the replicas' parameters (and so their gradients and all-reduces) in its master
  // dtype; the graph must be built in its activation dtype. Unset: uniform in the model's dtype (f32,
  // or f64 with batches of f64 images given by the caller; precision_of in graph_contract.h).
  std::optional<PrecisionPolicy> precision = std::nullopt;
};

class DataParallelEngine final : public ReplicatedTrainEngine {
 public:
  // `graph` (trainable) must outlive the engine. Replica r of N trains on rows [r n / N, (r + 1) n / N)
  // of each global batch of n rows (n a multiple of N), with the random layers keyed by
  // micro_batch_seed(step seed, r): the single-device run over the same batch in N micro-batches.
  // Collective: every replica's process constructs its engine, and the model fingerprints (parameter
  // names, dtypes, shapes) are compared (an error on every rank names the first difference).
  DataParallelEngine(const Graph& graph, const TrainConfig& config, DataParallelOptions options);
  ~DataParallelEngine() override;

  Context& input_context() override;
  // Replica 0 draws the initial values; the others receive them (broadcast).
  void initialize(uint64_t seed) override;
  // Issues the step on every replica of this process: on CPU devices it has run when this returns;
  // on GPUs nothing waits for the device (the optimiser's kernels wait for the gradients'
  // all-reduce on the device). The loss, the mean over all replicas, is read through PendingLoss,
  // which also raises any replica's deferred device checks (a bad label in its rows).
  PendingLoss step(const data::Batch& batch, uint64_t seed, double lr) override;
  // The test set sharded over the replicas, every sample counted once (rank 0's buffers everywhere first).
  EvalResult evaluate(const data::Dataset& test, int64_t batch_size, int workers) override;
  // Rank 0's parameters, buffers and optimiser state, in the single-device format.
  std::string save_checkpoint(CheckpointManager& manager, const CheckpointState& state) override;
  CheckpointState load_checkpoint(const std::string& dir) override;
  // (This process's shard of each global batch is its replicas' rows; rank 0's process writes.)
  void load_weights(const std::string& safetensors_path) override;

  // All replicas of the run, and those of this process.
  int replicas() const { return world_; }
  int local_replicas() const { return static_cast<int>(replicas_.size()); }
  const ParamStore& params(int local_replica) const;
  const BucketPlan& bucket_plan() const { return plan_; }
  // Model averaging: the times the replicas met, and the bytes a local replica has sent in the
  // averaging exchange (0 without model averaging).
  int64_t averaging_meetings() const;
  int64_t averaging_bytes_sent(int local_replica) const;
  // The last step of each of this process's replicas: its timeline and ready order.
  const ReplicaStepRecord& last_step(int local_replica) const;
  // Records the timelines of the next `steps` steps (this process's replicas) for take_trace().
  void set_trace_steps(int steps) { trace_steps_ = traced_steps_ + steps; }
  std::vector<TraceEvent> take_trace();
  std::vector<TraceLane> trace_lanes() const;

 private:
  struct Replica;
  // Runs fn(r) for every replica, each on a worker thread (replica 0 on the caller's); rethrows the
  // lowest-ranked failure after all have returned.
  void on_replicas(const std::function<void(Replica&)>& fn);
  // The replica's index among this process's replicas.
  size_t local_index(const Replica& r) const;
  // Every replica's parameters (and, with `buffers`, buffers) become rank 0's.
  void broadcast_from_rank0(bool buffers);
  // Before an evaluation or a checkpoint: the same model on every replica (model averaging: the
  // mean of the replicas' parameters, BMUF's global model or EASGD's centre; rank 0's buffers
  // either way); leave_agreement() then lets BMUF and EASGD replicas go on from their own parameters.
  void agree_on_model();
  void leave_agreement();
  // With model averaging: the state starts again from the replicas' (equal) parameters.
  void restart_averaging();
  // Model averaging's checkpoint file (averaging_checkpoint.h), during an agreement: collective,
  // rank 0's process receives every replica's state and returns the file, the others nothing.
  std::vector<CheckpointExtraFile> averaging_checkpoint_files();
  // A checkpoint's averaging file, checked in full against this run's replicas (nullopt when it has
  // none or this run does not average), and its state put into every replica (none: restart).
  std::optional<SafetensorsFile> open_averaging_state(const std::string& dir);
  void read_averaging_state(const std::optional<SafetensorsFile>& file);

  const Graph& graph_;
  DataParallelOptions options_;
  DType dtype_;  // the parameters': the precision policy's master dtype
  BucketPlan plan_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::unique_ptr<Event> batch_ready_;  // the batch written on replica 0's stream, reused every step
  int world_ = 1;                       // replicas in the run
  int64_t steps_ = 0;                   // steps run by this engine (model averaging's period)
  int trace_steps_ = 0, traced_steps_ = 0;
  std::chrono::steady_clock::time_point trace_origin_ = std::chrono::steady_clock::now();
  std::vector<TraceEvent> trace_;
  // The replicas' threads (replica 0 on the caller's), kept across steps.
  ReplicaThreads threads_{"data-parallel replica", FailureBlame::lowest_index};
};

}  // namespace baton::parallel
