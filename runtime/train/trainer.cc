// Trainer: checks the graph and the configuration, then runs a TrainRun on its engine (a
// SingleDeviceEngine of its own unless one was given).
#include "runtime/train/trainer.h"

#include <memory>

#include "runtime/train/graph_contract.h"
#include "runtime/train/single_device_engine.h"
#include "runtime/train/train_run.h"

namespace baton {

Trainer::Trainer(const Graph& graph, const TrainConfig& config, const data::Dataset& train_set,
                 const data::Dataset* test_set, Device device)
    : graph_(graph), config_(config), train_set_(train_set), test_set_(test_set), device_(device) {
  config_.validate("train config");
  check_trainable(graph, "Trainer");
}

Trainer::Trainer(const Graph& graph, const TrainConfig& config, const data::Dataset& train_set,
                 const data::Dataset* test_set, TrainEngine& engine)
    : Trainer(graph, config, train_set, test_set, engine.input_context().device()) {
  engine_ = &engine;
}

TrainSummary Trainer::run(const std::function<bool()>& stop_requested) {
  std::unique_ptr<TrainEngine> own;
  if (engine_ == nullptr) own = std::make_unique<SingleDeviceEngine>(graph_, config_, device_);
  TrainRun run(graph_, config_, train_set_, test_set_, engine_ != nullptr ? *engine_ : *own);
  run.start();
  return run.run(stop_requested);
}

}  // namespace baton
