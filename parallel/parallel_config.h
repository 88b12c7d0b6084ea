// ParallelConfig: how a training run is split over devices (`baton train --stages ...`, or the
// "parallel" object of a training config file, same names with '_' for '-'), read and checked.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "runtime/train/train_config.h"

namespace baton::parallel {

struct ParallelConfig {
  int stages = 0;                           // pipeline stages; 0: no pipeline (one device)
  int data_parallel = 0;                    // replicas of the whole model; 0: no data parallelism
  int groups = 1;                           // pipelines (of `stages` each) training data parallel: the hybrid
  std::string grad_sync = "bucket";         // the hybrid's gradient synchronisation: bucket or partition
  std::string model_averaging = "none";     // data parallel: none (synchronous) or periodic (local SGD)
  int average_every = 1;                    // model averaging: steps between parameter averages
  std::string unused_parameters = "error";  // data parallel: a parameter without gradient is an "error" or "ready"
  int micro_batches = 0;                    // per step; 0: the largest count <= 4 x stages dividing the batch
  std::string schedule = "1f1b";            // gpipe, 1f1b or interleaved (2 stages per position)
  std::string partitioner = "block";        // uniform, block, antichain or hypergraph
  std::string devices;                      // "cpu:0,cpu:1" or "cuda:0,cuda:1"; empty: from TrainConfig::device
  bool recompute = false;                   // every stage recomputes its forward in backward
  bool deferred_bn = false;                 // BatchNorm statistics once per mini-batch
  std::string trace;                        // Chrome trace file the caller writes (empty: no timelines recorded)
  int trace_steps = 10;                     // with `trace`: the measured steps recorded (not a file field)

  // Reads the fields present in `j` (a JSON object; "devices" may also be a list of names) over
  // the current values; unknown fields are errors naming `where` and the field.
  void update_from_json(const nlohmann::json& j, std::string_view where);
  nlohmann::json to_json() const;
};

// Removes the "parallel" object from a training config file's JSON `file` (so that the rest is
// read by TrainConfig::update_from_json) and returns it read over `defaults`.
ParallelConfig take_parallel_config(nlohmann::json& file, std::string_view where, ParallelConfig defaults = {});

// The micro-batch count of each group: `parallel.micro_batches`, or the largest count <= 4 x stages
// dividing the group's share of `batch` (batch / groups).
int micro_batch_count(const ParallelConfig& parallel, int64_t batch);

// One clear error for a pipeline that cannot be built whatever the model: stages < 1, groups < 1, a
// batch that does not split over the groups, micro-batches not dividing a group's share, an unknown
// schedule or gradient synchronisation.
void check_parallel_config(const ParallelConfig& parallel, const TrainConfig& config);

// One clear error for data parallelism that cannot run whatever the model: fewer than 1 replica, a
// global batch that does not split evenly over the replicas, pipeline settings beside it (the
// hybrid of pipeline and data parallelism is not available yet).
void check_data_parallel_config(const ParallelConfig& parallel, const TrainConfig& config);

}  // namespace baton::parallel
