// Trainer: the training loop. Data from a DataLoader, each step on a TrainEngine (the whole graph on
// one device, or a pipeline), the scheduled learning rate, evaluation (loss, top-1, top-5), progress
// and metrics, checkpoints, and exact resumption. The graph follows graph_contract.h.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/data/dataset.h"
#include "runtime/graph/graph.h"
#include "runtime/train/train_config.h"
#include "runtime/train/train_engine.h"

namespace baton {

struct TrainSummary {
  int64_t steps = 0;     // optimiser steps done in total (resumed ones included)
  int64_t epoch = 0;     // epoch the run ended in
  double last_loss = 0;  // mean training loss of the last logging interval (interrupted: of the steps since)
  double samples_per_second = 0;
  EvalResult eval;  // the final evaluation (samples == 0 if none ran)
  bool interrupted = false;
  std::string checkpoint;  // the last checkpoint written (empty if none)
};

class Trainer {
 public:
  Trainer(const Graph& graph, const TrainConfig& config, const data::Dataset& train_set, const data::Dataset* test_set,
          Device device);
  // Runs each step on `engine` (e.g. a PipelineTrainEngine) instead of one device; the engine must
  // outlive the trainer.
  Trainer(const Graph& graph, const TrainConfig& config, const data::Dataset& train_set, const data::Dataset* test_set,
          TrainEngine& engine);
  // Runs until the configured steps or epochs are done, or `stop_requested()` turns true (checked
  // after each step: the run then saves a checkpoint, if it has a directory, and returns).
  TrainSummary run(const std::function<bool()>& stop_requested);

 private:
  const Graph& graph_;
  TrainConfig config_;
  const data::Dataset& train_set_;
  const data::Dataset* test_set_;
  Device device_;
  TrainEngine* engine_ = nullptr;  // null: the whole model on device_
};

}  // namespace baton
