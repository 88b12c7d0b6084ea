// `baton train --stages S ...`: plans the pipeline (profile measured on the first device at the
// micro-batch size), prints the stage table, trains through the PipelineExecutor, prints the
// predicted and measured step times side by side and writes both timelines to --trace.
#pragma once

#include <functional>
#include <string>

#include "runtime/data/dataset.h"
#include "runtime/graph/graph.h"
#include "runtime/train/train_config.h"
#include "runtime/train/trainer.h"

namespace baton::cli {

struct PipelineFlags {
  int stages = 0;  // 0: no pipeline (the single-device trainer)
  int micro_batches = 0;  // 0: the largest count <= 4 x stages dividing the batch
  std::string schedule = "1f1b";
  std::string partitioner = "block";
  std::string devices;  // comma list; empty: from --device (CPU: virtual devices cpu:0..S-1)
  bool recompute = false;
  bool deferred_bn = false;
  std::string trace_path;
  bool any_given = false;  // some pipeline flag was on the command line
};

// Checks the flags that need no model (one clear error each); call before loading data.
void check_pipeline_flags(const PipelineFlags& flags, const TrainConfig& config, bool device_given);

TrainSummary train_pipelined(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                             const PipelineFlags& flags, const data::Dataset& train_set, const data::Dataset* test_set,
                             const std::function<bool()>& stop_requested);

}  // namespace baton::cli
