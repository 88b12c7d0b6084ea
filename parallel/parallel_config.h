// ParallelConfig: how a training run is split over devices (`baton train --stages ...`, or the
// "parallel" object of a training config file, same names with '_' for '-'), read and checked.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "parallel/comm/backend_table.h"
#include "parallel/parallel_choices.h"
#include "parallel/pipeline/stage_sync.h"
#include "parallel/plan/schedule.h"
#include "parallel/replicas/model_averaging.h"
#include "runtime/train/train_config.h"

namespace baton::parallel {

struct ParallelConfig {
  int stages = 0;         // pipeline stages; 0: no pipeline (one device)
  int data_parallel = 0;  // replicas of the whole model; 0: no data parallelism
  int groups = 1;         // pipelines (of `stages` each) training data parallel: the hybrid
  GradSyncStrategy grad_sync = GradSyncStrategy::bucket;  // the hybrid's gradient synchronisation
  Averaging model_averaging = Averaging::none;            // data parallel: synchronous, or how replicas average
  int average_every = 1;                                  // model averaging: steps between the replicas' meetings (H)
  std::optional<double> block_momentum;                   // BMUF: block momentum mu (unset / null: 1 - 1/N)
  double block_lr = 1;                                    // BMUF: block learning rate zeta
  bool block_nesterov = true;                             // BMUF: blocks start from w_g + mu v (true) or from w_g
  double elastic_beta = 0.9;                              // EASGD: moving rate beta (alpha = beta / N)
  int local_after = 0;                                    // post-local SGD: synchronous steps before local SGD (K)
  ExchangeKind averaging_exchange = ExchangeKind::ring;   // model averaging: ring or tree (by node)
  std::string averaging_cluster;  // tree: a cluster name or JSON file placing replica r on its device r
  UnusedParameters unused_parameters = UnusedParameters::error;  // data parallel: a parameter without gradient
  int micro_batches = 0;                              // per step; 0: the largest count <= 4 x stages dividing the batch
  ScheduleKind schedule = ScheduleKind::one_f_one_b;  // gpipe, 1f1b or interleaved (2 stages per position)
  PartitionerKind partitioner = PartitionerKind::block;
  // equal: every stage on `groups` devices (G groups of the pipeline); free: the antichain
  // partitioner chooses at most `stages` stages and each stage's replicas within groups x stages
  // devices (PipeDream), the step keeping groups x micro_batches micro-batches.
  Replication replication = Replication::equal;
  std::string devices;       // "cpu:0,cpu:1" or "cuda:0,cuda:1"; empty: from TrainConfig::device
  bool recompute = false;    // every stage recomputes its forward in backward
  bool deferred_bn = false;  // BatchNorm statistics once per mini-batch
  std::string trace;         // Chrome trace file the caller writes (empty: no timelines recorded)
  int trace_steps = 10;      // with `trace`: the measured steps recorded (not a file field)
  // The communicators' backend: auto (comm/backend_table.h's row for the devices and the launcher),
  // inproc, mpi, nccl or nccl-mpi (checked against that row: one error naming what would serve).
  comm::CommBackend comm_backend = comm::CommBackend::automatic;
  std::string plan_file;  // a plan file (`baton plan --json FILE`) trained as written (plan_file_run.h)

  // Reads the fields present in `j` (a JSON object; "devices" may also be a list of names) over
  // the current values, the choices by the names flags use ("1f1b", "post-local"); unknown fields
  // and names are errors naming `where`, the field and what it accepts.
  void update_from_json(const nlohmann::json& j, std::string_view where);
  nlohmann::json to_json() const;
};

// Removes the "parallel" object from a training config file's JSON `file` (so that the rest is
// read by TrainConfig::update_from_json) and returns it read over `defaults`.
ParallelConfig take_parallel_config(nlohmann::json& file, std::string_view where, ParallelConfig defaults = {});

// The run's layout in words: "one device", "a pipeline of 2 stages", "the hybrid of 2 groups x 2
// stages", "data parallelism over 4 replicas (model averaging bmuf)", "the plan in plan.json".
std::string layout_description(const ParallelConfig& parallel);

// The micro-batch count of each group: `parallel.micro_batches`, or the largest count <= 4 x stages
// dividing the group's share of `batch` (batch / groups).
int micro_batch_count(const ParallelConfig& parallel, int64_t batch);

// One clear error for a pipeline that cannot be built whatever the model: stages < 1, groups < 1, a
// batch that does not split over the groups, micro-batches not dividing a group's share, free
// replication without the antichain partitioner or with the interleaved schedule. plan_pipeline
// checks (parallel_training.h); its callers need not.
void check_parallel_config(const ParallelConfig& parallel, const TrainConfig& config);

// The model averaging `parallel` asks for over `replicas` replicas, checked: one clear error naming
// the flag for a knob out of range or given to a variant it is not for (the tree's nodes: replica r
// on device r of parallel.averaging_cluster, else by host).
ModelAveraging model_averaging_of(const ParallelConfig& parallel, int replicas);

// One clear error for data parallelism that cannot run whatever the model: fewer than 1 replica, a
// global batch that does not split evenly over the replicas, pipeline settings beside it (the
// hybrid of pipeline and data parallelism is --groups G --stages S). make_data_parallel_engine
// checks (parallel_training.h), with the model averaging; its callers need not.
void check_data_parallel_config(const ParallelConfig& parallel, const TrainConfig& config);

}  // namespace baton::parallel
