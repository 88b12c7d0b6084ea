// Trainer::run's loop, piece by piece: start (initial weights, resume), step, log, evaluate, save.
#include "runtime/train/train_run.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "runtime/core/error.h"
#include "runtime/train/evaluation.h"
#include "runtime/train/graph_difference.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

// The Philox key of a step's random layers (dropout): the run's seed mixed with the step.
uint64_t step_seed(uint64_t seed, int64_t step) {
  return seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(step) + 1;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Shuffled, full batches (BatchNorm statistics never come from a sliver), normalised, and random
// crops and flips for 32x32 images when config.augment.
// With several processes (data parallelism under mpirun), this process's rows of every global batch.
data::LoaderOptions training_loader_options(const TrainConfig& config, const data::Dataset& train_set,
                                            DataShard shard) {
  data::LoaderOptions options;
  options.batch_size = config.batch_size;
  options.shard = shard.index;
  options.shards = shard.count;
  options.shuffle = true;
  options.drop_last = true;
  options.seed = config.seed;
  options.workers = config.workers;
  if (!train_set.has_images()) return options;
  options.normalization = train_set.normalization();
  const Shape image = train_set.image_shape();
  if (config.augment && image[1] == 32 && image[2] == 32) {
    options.augmentation.crop_padding = 4;
    options.augmentation.horizontal_flip = true;
  }
  return options;
}

int64_t batches_per_epoch(const data::DataLoader& loader, const data::Dataset& train_set, int64_t batch_size) {
  const int64_t per_epoch = loader.batches_per_epoch();
  BATON_CHECK(per_epoch > 0, "the training set (", train_set.size(), " samples) has no full batch of ", batch_size);
  return per_epoch;
}

// The configured schedule; a decaying one without total_steps decays over the whole run.
LrSchedule run_schedule(const TrainConfig& config, int64_t total_steps) {
  nlohmann::json schedule_json = config.lr_schedule;
  if (!schedule_json.contains("total_steps")) schedule_json["total_steps"] = total_steps;
  return LrSchedule::from_json(schedule_json, "train config: lr_schedule");
}

}  // namespace

TrainRun::TrainRun(const Graph& graph, const TrainConfig& config, const data::Dataset& train_set,
                   const data::Dataset* test_set, TrainEngine& engine)
    : config_(config),
      test_set_(test_set),
      engine_(engine),
      loader_(train_set, training_loader_options(config, train_set, engine.data_shard()),
              engine.input_context().device()),
      per_epoch_(batches_per_epoch(loader_, train_set, config.batch_size)),
      total_steps_(config.total_steps(per_epoch_)),
      schedule_(run_schedule(config, total_steps_)),
      progress_(engine.primary() ? stdout : nullptr, isatty(STDOUT_FILENO) != 0, config.log_every) {
  checkpoint_state_.seed = config.seed;
  checkpoint_state_.model_spec = graph.to_json();
  checkpoint_state_.train_config = config.to_json();
  if (config.checkpoint_dir.empty()) return;
  checkpoints_ = std::make_unique<CheckpointManager>(config.checkpoint_dir, config.keep_checkpoints);
  const bool fresh = !config.resume;
  if (fresh && !config.overwrite) refuse_another_runs_checkpoints();  // before the lock: changes nothing
  if (engine.primary()) {                                             // the process that writes the checkpoints
    lock_ = std::make_unique<CheckpointLock>(config.checkpoint_dir);
    if (lock_->removed_leftovers() > 0) {
      progress_.message("removed " + std::to_string(lock_->removed_leftovers()) + " temporary directories of " +
                        "interrupted saves from " + config.checkpoint_dir);
    }
    if (fresh && config.overwrite && checkpoints_->latest()) {
      progress_.message("--overwrite: deleted " + std::to_string(checkpoints_->remove_all()) +
                        " checkpoint directories of another run from " + config.checkpoint_dir);
    }
  }
  if (fresh && config.overwrite) engine.any_rank(false);  // every process waits for the deletion
}

void TrainRun::refuse_another_runs_checkpoints() {
  // The first process looks (the others wait in any_rank, so none can see this run's first save).
  const std::optional<std::string> found = engine_.primary() ? checkpoints_->latest() : std::nullopt;
  if (!engine_.any_rank(found.has_value())) return;
  const std::optional<std::string> newest = engine_.primary() ? found : checkpoints_->latest();
  BATON_FAIL("the checkpoint directory '", config_.checkpoint_dir, "' holds another run's checkpoints (the newest, ",
             newest ? *newest : std::string("seen by the first process"), "): a fresh run would delete them; --resume ",
             config_.checkpoint_dir, " continues that run, --overwrite replaces it, or use another --checkpoint-dir");
}

void TrainRun::start() {
  engine_.initialize(config_.seed);
  if (!config_.weights.empty()) {
    engine_.load_weights(config_.weights);
    progress_.message("weights from " + config_.weights + ", starting at step 0");
  }
  if (checkpoints_ && config_.resume) resume();
  if (config_.metrics.empty() || !engine_.primary()) {  // one process writes the metrics
    metrics_.emplace();
  } else {
    metrics_.emplace(config_.metrics);
  }
}

void TrainRun::resume() {
  const std::optional<std::string> latest = checkpoints_->latest();
  if (!latest) {
    progress_.message("no checkpoint in " + config_.checkpoint_dir + " yet: starting from scratch");
    return;
  }
  const CheckpointState restored = engine_.load_checkpoint(*latest);
  check_same_graph(restored.model_spec, checkpoint_state_.model_spec, *latest);
  BATON_CHECK(restored.step <= total_steps_, *latest, " is at step ", restored.step,
              ", past the end of this run at step ", total_steps_,
              " (--steps or --epochs): nothing to train; give more steps to go on");
  step_ = restored.step;
  epoch_ = restored.epoch;
  divergence_.restore(restored.divergence, restored.step, *latest);
  loader_.seek(restored.loader_position.get<data::LoaderPosition>());
  progress_.message("resumed from " + *latest + " at step " + std::to_string(step_));
}

TrainSummary TrainRun::run(const std::function<bool()>& stop_requested) {
  stop_requested_ = stop_requested;
  start_ = interval_.start = Clock::now();
  first_step_ = step_;
  while (step_ < total_steps_ && !stopping_) {
    std::optional<data::Batch> batch = loader_.next(engine_.input_context().stream());
    if (!batch) {
      end_epoch();  // an evaluation cut short by a stop request sets stopping_
      continue;
    }
    train_step(*batch);
    if (config_.checkpoint_every > 0 && step_ % config_.checkpoint_every == 0) save(epoch_);
    stopping_ = stop_asked();
  }
  if (stopping_) {
    resolve_pending();
    // The summary's loss: the steps since the last metrics line (log_every may not have come yet).
    if (interval_.steps > 0) summary_.last_loss = interval_.loss / static_cast<double>(interval_.steps);
    progress_.message("interrupted at step " + std::to_string(step_));
    save(epoch_);
    summary_.interrupted = true;
  }
  finish();
  return summary_;
}

bool TrainRun::stop_asked() { return stop_requested_ && engine_.any_rank(stop_requested_()); }

void TrainRun::train_step(const data::Batch& batch) {
  const double lr = schedule_.at(step_);
  PendingStep issued{.loss = engine_.step(batch, step_seed(config_.seed, step_), lr),
                     .step = step_,
                     .epoch = epoch_,
                     .batch_index = batch.index,
                     .samples = batch.rows() * engine_.data_shard().count,  // every process's
                     .lr = lr};
  ++step_;
  resolve_pending();  // the previous step's: its work ran before this step's, which is issued
  pending_ = std::move(issued);
}

void TrainRun::resolve_pending() {
  if (!pending_) return;
  PendingStep done = std::move(*pending_);
  pending_.reset();
  const double loss = done.loss.value();
  check_divergence(done, loss);
  log(done, loss);
}

void TrainRun::check_divergence(const PendingStep& done, double loss) {
  const std::string why = divergence_.check(done.step, loss);
  if (why.empty()) return;
  BATON_FAIL("training diverged: ", why, " (lower the learning rate?); ", way_back());
}

std::string TrainRun::way_back() {
  const std::optional<int64_t> healthy_step = divergence_.healthy_step();
  const std::optional<std::string> healthy =
      checkpoints_ && healthy_step ? checkpoints_->at_step(*healthy_step) : std::nullopt;
  if (!healthy) {
    if (!checkpoints_ || !checkpoints_->latest()) return "there is no checkpoint to go back to";
    return "there is no healthy checkpoint to go back to (none was followed by losses under " +
           std::to_string(static_cast<int>(kHealthyLossFactor)) + " times the first): start again (--overwrite)";
  }
  std::string text = "the newest healthy checkpoint, " + *healthy + ", is from before it";
  // The first process sets the newer ones aside.
  const std::vector<std::string> aside =
      engine_.primary() ? checkpoints_->set_aside_after(*healthy_step) : std::vector<std::string>();
  if (!aside.empty()) {
    text += "; the " + std::to_string(aside.size()) + " newer one(s) were set aside (" + aside.back() +
            (aside.size() > 1 ? ", ..." : "") + ")";
  }
  return text + ": --resume " + config_.checkpoint_dir + " continues from it";
}

// The progress bar after every step; a metrics line every log_every steps and after the last.
void TrainRun::log(const PendingStep& done, double loss) {
  const int64_t steps_done = done.step + 1;
  interval_.samples += done.samples;
  run_samples_ += done.samples;
  interval_.loss += loss;
  ++interval_.steps;
  const double elapsed = seconds_since(start_);
  progress_.update({.epoch = done.epoch + 1,
                    .batch = done.batch_index + 1,
                    .batches_per_epoch = per_epoch_,
                    .step = steps_done,
                    .loss = loss,
                    .lr = done.lr,
                    .samples_per_second = static_cast<double>(run_samples_) / std::max(elapsed, 1e-9),
                    .eta_seconds = static_cast<double>(total_steps_ - steps_done) * elapsed /
                                   static_cast<double>(std::max<int64_t>(steps_done - first_step_, 1))});
  if (steps_done % config_.log_every != 0 && steps_done != total_steps_) return;
  const double seconds = seconds_since(interval_.start);
  summary_.last_loss = interval_.loss / static_cast<double>(interval_.steps);
  metrics_->write({{"type", "train"},
                   {"epoch", done.epoch},
                   {"step", steps_done},
                   {"loss", summary_.last_loss},
                   {"lr", done.lr},
                   {"samples_per_second", static_cast<double>(interval_.samples) / std::max(seconds, 1e-9)}});
  interval_ = LogInterval();
}

void TrainRun::end_epoch() {
  resolve_pending();  // the epoch's last step belongs to its progress bar
  progress_.finish_epoch();
  ++epoch_;
  if (config_.eval_every > 0 && epoch_ % config_.eval_every == 0) evaluate(epoch_);
  if (config_.checkpoint_every == 0 && !stopping_) save(epoch_);  // a stopping run saves as it stops
}

void TrainRun::evaluate(int64_t at_epoch) {
  resolve_pending();
  if (test_set_ == nullptr) return;
  const EvalResult& eval = summary_.eval = engine_.evaluate(*test_set_, config_.batch_size, config_.workers);
  if (stop_asked()) {  // the evaluation may have stopped part way: its figures are not the test set's
    summary_.eval = EvalResult();
    stopping_ = true;
    progress_.message("evaluation stopped at step " + std::to_string(step_) + " (interrupted)");
    return;
  }
  nlohmann::json record = {
      {"type", "eval"}, {"epoch", at_epoch}, {"step", step_}, {"loss", eval.loss}, {"samples", eval.samples}};
  char text[160];
  const int used =
      std::snprintf(text, sizeof(text), "eval epoch %lld: loss %.4f", static_cast<long long>(at_epoch), eval.loss);
  if (eval.top1 >= 0) {
    record["top1"] = eval.top1;
    record["top5"] = eval.top5;
    std::snprintf(text + used, sizeof(text) - static_cast<size_t>(used), ", top-1 %.2f%%, top-5 %.2f%%",
                  100 * eval.top1, 100 * eval.top5);
  }
  metrics_->write(record);
  progress_.message(text);
}

void TrainRun::save(int64_t at_epoch) {
  resolve_pending();  // a step that failed a check or diverged is not saved
  if (!checkpoints_) return;
  checkpoint_state_.step = step_;
  checkpoint_state_.epoch = at_epoch;
  checkpoint_state_.loader_position = loader_.position();
  divergence_.checkpoint_at(step_);
  checkpoint_state_.divergence = divergence_.to_json();
  checkpoints_->keep_also(divergence_.healthy_step());
  summary_.checkpoint = engine_.save_checkpoint(*checkpoints_, checkpoint_state_);
  progress_.message("checkpoint " + summary_.checkpoint);
}

// The last step is not followed by the loader's end-of-epoch signal: evaluate and save here.
void TrainRun::finish() {
  resolve_pending();
  progress_.finish_epoch();
  if (!summary_.interrupted) {
    if (config_.eval_every > 0) evaluate(epoch_ + 1);  // the epoch in progress, 1-based
    if (!checkpoints_ || config_.checkpoint_every == 0 || step_ % config_.checkpoint_every != 0) save(epoch_);
    summary_.interrupted = stopping_;  // the last evaluation was cut short
  }
  summary_.steps = step_;
  summary_.epoch = epoch_;
  summary_.samples_per_second = static_cast<double>(run_samples_) / std::max(seconds_since(start_), 1e-9);
}

}  // namespace baton
