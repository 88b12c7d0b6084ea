// `baton train --stages S ...` and `--data-parallel N`: prints what parallel/parallel_training.h planned (the stage
// table), trains through its engine, prints the predicted and measured step times side by side and writes both
// timelines to --trace.
#pragma once

#include <functional>
#include <string>

#include "parallel/parallel_config.h"
#include "runtime/data/dataset.h"
#include "runtime/graph/graph.h"
#include "runtime/train/train_config.h"
#include "runtime/train/trainer.h"

namespace baton::cli {

TrainSummary train_pipelined(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                             const parallel::ParallelConfig& parallel, const data::Dataset& train_set,
                             const data::Dataset* test_set, const std::function<bool()>& stop_requested);

// `baton train --data-parallel N ...`: prints the replicas' devices and gradient buckets, then trains
// through parallel/parallel_training.h's data-parallel engine.
TrainSummary train_data_parallel(const Graph& graph, const TrainConfig& config,
                                 const parallel::ParallelConfig& parallel, const data::Dataset& train_set,
                                 const data::Dataset* test_set, const std::function<bool()>& stop_requested);

}  // namespace baton::cli
