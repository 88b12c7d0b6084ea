// TrainRun: one run of the training loop over a TrainEngine — the loader, the learning-rate
// schedule, checkpoints, progress, metrics and counters of Trainer::run, as start / step / log /
// evaluate / save pieces. A step's loss is read one step late (after the next step's work is
// issued) or at the next log, evaluation, checkpoint or end, so the host never waits for the GPU
// between two steps.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "runtime/data/loader.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/checkpoint_lock.h"
#include "runtime/train/divergence_guard.h"
#include "runtime/train/lr_schedule.h"
#include "runtime/train/metrics_log.h"
#include "runtime/train/pending_loss.h"
#include "runtime/train/progress.h"
#include "runtime/train/trainer.h"

namespace baton {

// The steps since the last metrics line: their samples and summed loss, and when they began.
struct LogInterval {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  int64_t samples = 0;
  int64_t steps = 0;
  double loss = 0;
};

// A step whose loss has not been read yet, with what its progress and metrics lines need.
struct PendingStep {
  PendingLoss loss;
  int64_t step = 0;  // 0-based
  int64_t epoch = 0;
  int64_t batch_index = 0;
  int64_t samples = 0;
  double lr = 0;
};

// One run of the training loop over `engine`.
class TrainRun {
 public:
  TrainRun(const Graph& graph, const TrainConfig& config, const data::Dataset& train_set, const data::Dataset* test_set,
           TrainEngine& engine);
  // Initial weights from the seed (then from config.weights when given), then the newest checkpoint
  // when resuming.
  void start();
  // Trains until the last step or until stop_requested() turns true after a step or an evaluation
  // (which runtime/core/stop_request.h's request cuts short, its figures then dropped).
  TrainSummary run(const std::function<bool()>& stop_requested);

 private:
  // A fresh run (no resume, no overwrite) into a directory holding checkpoints: an error naming the
  // directory and its newest checkpoint, in every process alike.
  void refuse_another_runs_checkpoints();
  // stop_requested_() on any rank (a collective: every rank asks at the same points).
  bool stop_asked();
  void resume();
  void train_step(const data::Batch& batch);
  // Reads the pending step's loss (raising its deferred check failures), checks it and logs it.
  void resolve_pending();
  // Ends the run when `loss` is not finite or exceeds kExplodingLossFactor times the first loss of
  // the run (at least 1; carried across resumes): an error naming the step and the newest healthy
  // checkpoint, the newer ones set aside so that --resume continues from it.
  void check_divergence(const PendingStep& done, double loss);
  // The divergence message's end: the healthy checkpoint to go back to, and what was set aside.
  std::string way_back();
  void log(const PendingStep& done, double loss);
  void end_epoch();
  void evaluate(int64_t at_epoch);
  void save(int64_t at_epoch);
  void finish();

  const TrainConfig& config_;
  const data::Dataset* test_set_;
  TrainEngine& engine_;
  data::DataLoader loader_;
  int64_t per_epoch_;
  int64_t total_steps_;
  LrSchedule schedule_;
  std::unique_ptr<CheckpointLock> lock_;  // held by the process that writes the checkpoints
  std::unique_ptr<CheckpointManager> checkpoints_;
  CheckpointState checkpoint_state_;
  ProgressReporter progress_;
  std::optional<MetricsLog> metrics_;  // set by start(): no file, or config.metrics
  TrainSummary summary_;
  int64_t step_ = 0, epoch_ = 0, first_step_ = 0, run_samples_ = 0;
  std::chrono::steady_clock::time_point start_;
  LogInterval interval_;
  std::optional<PendingStep> pending_;
  DivergenceGuard divergence_;
  std::function<bool()> stop_requested_;  // run()'s
  bool stopping_ = false;                 // a stop was asked: save and end
};

}  // namespace baton
