// Trainer implementation.
#include "runtime/train/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>

#include "kernels/loss.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"
#include "runtime/data/loader.h"
#include "runtime/graph/executor.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/lr_schedule.h"
#include "runtime/train/metrics_log.h"
#include "runtime/train/optimizer.h"
#include "runtime/train/progress.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

// The Philox key of a step's random layers (dropout): the run's seed mixed with the step.
uint64_t step_seed(uint64_t seed, int64_t step) { return seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(step) + 1; }

}  // namespace

data::Normalization normalization_for(const data::Dataset& d) {
  const std::string name = d.name();
  if (name.rfind("cifar", 0) == 0) {
    return {{0.4914f, 0.4822f, 0.4465f}, {0.2470f, 0.2435f, 0.2616f}};
  }
  const auto channels = static_cast<size_t>(d.image_shape()[0]);
  return {std::vector<float>(channels, 0.5f), std::vector<float>(channels, 0.5f)};
}

Trainer::Trainer(const Graph& graph, const TrainConfig& config, const data::Dataset& train_set,
                 const data::Dataset* test_set, Device device)
    : graph_(graph), config_(config), train_set_(train_set), test_set_(test_set), device_(device) {
  config_.validate("train config");
  BATON_CHECK(graph.outputs().size() >= 2, "the model graph needs two outputs (the loss, then the prediction), has ",
              graph.outputs().size());
  BATON_CHECK(graph.has_value("x"), "the model graph needs an input named \"x\"");
}

Trainer::Trainer(const Graph& graph, const TrainConfig& config, const data::Dataset& train_set,
                 const data::Dataset* test_set, TrainEngine& engine)
    : Trainer(graph, config, train_set, test_set, engine.input_context().device()) {
  engine_ = &engine;
}

namespace {

// Tensors for the executor's inputs, by name.
std::vector<Tensor> executor_inputs(const Graph& g, const Executor& ex, const data::Batch& b) {
  std::vector<Tensor> in;
  for (ValueId v : ex.input_values()) {
    const std::string& name = g.value(v).name;
    BATON_CHECK(name == "x" || name == "labels", "the model graph has an input '", name,
                "'; the trainer feeds only \"x\" and \"labels\"");
    in.push_back(name == "x" ? b.images : b.labels);
  }
  return in;
}

size_t output_index(const Executor& ex, ValueId v) {
  const auto it = std::find(ex.output_values().begin(), ex.output_values().end(), v);
  BATON_CHECK(it != ex.output_values().end(), "graph output is not produced by the executor");
  return static_cast<size_t>(it - ex.output_values().begin());
}

}  // namespace

EvalResult evaluate_batches(Context& input_ctx, const data::Dataset& test, int64_t batch_size, int workers,
                            bool classification,
                            const std::function<std::vector<EvalPiece>(const data::Batch&)>& forward) {
  data::LoaderOptions options;
  options.batch_size = batch_size;
  options.shuffle = false;
  options.drop_last = false;
  options.workers = workers;
  options.normalization = normalization_for(test);
  data::DataLoader loader(test, options, input_ctx.device());
  EvalResult r;
  double loss_sum = 0;
  int64_t top1 = 0, top5 = 0;
  while (auto batch = loader.next(input_ctx.stream())) {
    for (const EvalPiece& piece : forward(*batch)) {
      Context& ctx = *piece.ctx;
      const double n = static_cast<double>(piece.samples);
      loss_sum += piece.loss.to(Device::cpu(), ctx.stream()).to_vector<float>(ctx.stream())[0] * n;
      if (classification) {
        Tensor count = Tensor::empty(Shape{}, DType::i64, ctx);
        kernels::topk_correct(ctx, piece.logits, piece.labels, 1, count);
        top1 += count.to_vector<int64_t>(ctx.stream())[0];
        const int k5 = std::min<int>(5, static_cast<int>(piece.logits.size(1)));
        kernels::topk_correct(ctx, piece.logits, piece.labels, k5, count);
        top5 += count.to_vector<int64_t>(ctx.stream())[0];
      }
      r.samples += piece.samples;
    }
  }
  if (r.samples > 0) {
    r.loss = loss_sum / static_cast<double>(r.samples);
    if (classification) {
      r.top1 = static_cast<double>(top1) / static_cast<double>(r.samples);
      r.top5 = static_cast<double>(top5) / static_cast<double>(r.samples);
    }
  }
  return r;
}

EvalResult evaluate_model(const Graph& g, Executor& ex, Context& ctx, const data::Dataset& test, int64_t batch_size,
                          int workers) {
  const size_t loss_at = output_index(ex, g.outputs()[0]);
  const size_t prediction_at = output_index(ex, g.outputs()[1]);
  const bool classification = g.has_value("labels");
  return evaluate_batches(ctx, test, batch_size, workers, classification, [&](const data::Batch& batch) {
    Tape tape;
    const std::vector<Tensor> out = ex.forward(ctx, executor_inputs(g, ex, batch), tape, Mode::eval);
    return std::vector<EvalPiece>{{.ctx = &ctx,
                                   .loss = out[loss_at],
                                   .logits = classification ? out[prediction_at] : Tensor(),
                                   .labels = batch.labels,
                                   .samples = batch.images.size(0)}};
  });
}

namespace {

// The whole model on one device.
class SingleDeviceEngine final : public TrainEngine {
 public:
  SingleDeviceEngine(const Graph& g, const TrainConfig& c, Device d)
      : graph_(g), ctx_(d), params_(g, g.topological_order(), DType::f32, ctx_), executor_(g, g.topological_order(), params_),
        loss_at_(output_index(executor_, g.outputs()[0])) {
    ctx_.set_allow_tf32(c.tf32);
    optimizer_ = make_optimizer(c.optimizer, params_, ctx_, "train config: optimizer");
  }
  Context& input_context() override { return ctx_; }
  void initialize(uint64_t seed) override { params_.initialize(ctx_, seed); }
  double step(const data::Batch& batch, uint64_t seed, double lr) override {
    params_.zero_grads(ctx_);
    Tape tape;
    const std::vector<Tensor> out =
        executor_.forward(ctx_, executor_inputs(graph_, executor_, batch), tape, Mode::train, seed);
    executor_.backward(ctx_, tape, std::vector<Tensor>(out.size()));
    optimizer_->step(ctx_, lr);
    return out[loss_at_].to(Device::cpu(), ctx_.stream()).to_vector<float>(ctx_.stream())[0];
  }
  EvalResult evaluate(const data::Dataset& test, int64_t batch_size, int workers) override {
    return evaluate_model(graph_, executor_, ctx_, test, batch_size, workers);
  }
  std::string save_checkpoint(CheckpointManager& manager, const CheckpointState& state) override {
    return manager.save(params_, *optimizer_, state, ctx_);
  }
  CheckpointState load_checkpoint(const std::string& dir) override {
    return CheckpointManager::load(dir, params_, optimizer_.get(), ctx_);
  }

 private:
  const Graph& graph_;
  Context ctx_;
  ParamStore params_;
  Executor executor_;
  size_t loss_at_;
  std::unique_ptr<Optimizer> optimizer_;
};

}  // namespace

TrainSummary Trainer::run(const std::function<bool()>& stop_requested) {
  std::unique_ptr<TrainEngine> own;
  if (engine_ == nullptr) own = std::make_unique<SingleDeviceEngine>(graph_, config_, device_);
  TrainEngine& engine = engine_ != nullptr ? *engine_ : *own;
  Context& ctx = engine.input_context();
  engine.initialize(config_.seed);

  data::LoaderOptions options;
  options.batch_size = config_.batch_size;
  options.shuffle = true;
  options.drop_last = true;  // equal batches: BatchNorm statistics never come from a sliver
  options.seed = config_.seed;
  options.workers = config_.workers;
  options.normalization = normalization_for(train_set_);
  const Shape image = train_set_.image_shape();
  if (config_.augment && image[1] == 32 && image[2] == 32) {
    options.augmentation.crop_padding = 4;
    options.augmentation.horizontal_flip = true;
  }
  data::DataLoader loader(train_set_, options, device_);
  const int64_t per_epoch = loader.batches_per_epoch();
  BATON_CHECK(per_epoch > 0, "the training set (", train_set_.size(), " samples) has no full batch of ",
              config_.batch_size);
  const int64_t total_steps = config_.steps > 0 ? config_.steps : config_.epochs * per_epoch;

  nlohmann::json schedule_json = config_.lr_schedule;
  if (!schedule_json.contains("total_steps")) schedule_json["total_steps"] = total_steps;
  const LrSchedule schedule = LrSchedule::from_json(schedule_json, "train config: lr_schedule");

  std::unique_ptr<CheckpointManager> checkpoints;
  CheckpointState checkpoint_state;
  checkpoint_state.seed = config_.seed;
  checkpoint_state.model_spec = graph_.to_json();
  checkpoint_state.train_config = config_.to_json();
  ProgressReporter progress(stdout, isatty(STDOUT_FILENO) != 0, config_.log_every);
  int64_t step = 0, epoch = 0;
  if (!config_.checkpoint_dir.empty()) {
    checkpoints = std::make_unique<CheckpointManager>(config_.checkpoint_dir, config_.keep_checkpoints);
    if (config_.resume) {
      if (const std::optional<std::string> latest = checkpoints->latest()) {
        const CheckpointState restored = engine.load_checkpoint(*latest);
        step = restored.step;
        epoch = restored.epoch;
        loader.seek(restored.loader_position.get<data::LoaderPosition>());
        progress.message("resumed from " + *latest + " at step " + std::to_string(step));
      } else {
        progress.message("no checkpoint in " + config_.checkpoint_dir + " yet: starting from scratch");
      }
    }
  }
  MetricsLog metrics = config_.metrics.empty() ? MetricsLog() : MetricsLog(config_.metrics);

  TrainSummary summary;
  auto save = [&](int64_t at_epoch) {
    if (!checkpoints) return;
    checkpoint_state.step = step;
    checkpoint_state.epoch = at_epoch;
    checkpoint_state.loader_position = loader.position();
    summary.checkpoint = engine.save_checkpoint(*checkpoints, checkpoint_state);
    progress.message("checkpoint " + summary.checkpoint);
  };
  auto evaluate_now = [&](int64_t at_epoch) {
    if (test_set_ == nullptr) return;
    summary.eval = engine.evaluate(*test_set_, config_.batch_size, config_.workers);
    nlohmann::json record = {{"type", "eval"}, {"epoch", at_epoch}, {"step", step}, {"loss", summary.eval.loss},
                             {"samples", summary.eval.samples}};
    char text[160];
    int used = std::snprintf(text, sizeof(text), "eval epoch %lld: loss %.4f", static_cast<long long>(at_epoch),
                             summary.eval.loss);
    if (summary.eval.top1 >= 0) {
      record["top1"] = summary.eval.top1;
      record["top5"] = summary.eval.top5;
      std::snprintf(text + used, sizeof(text) - static_cast<size_t>(used), ", top-1 %.2f%%, top-5 %.2f%%",
                    100 * summary.eval.top1, 100 * summary.eval.top5);
    }
    metrics.write(record);
    progress.message(text);
  };

  const auto start = Clock::now();
  auto interval_start = start;
  int64_t interval_samples = 0, run_samples = 0, interval_steps = 0;
  double interval_loss = 0;
  const int64_t first_step = step;
  while (step < total_steps) {
    std::optional<data::Batch> batch = loader.next(ctx.stream());
    if (!batch) {  // end of an epoch
      progress.finish_epoch();
      ++epoch;
      if (config_.eval_every > 0 && epoch % config_.eval_every == 0) evaluate_now(epoch);
      if (config_.checkpoint_every == 0) save(epoch);
      continue;
    }
    const double lr = schedule.at(step);
    const double loss = engine.step(*batch, step_seed(config_.seed, step), lr);
    BATON_CHECK(std::isfinite(loss), "training diverged: the loss is ", loss, " at step ", step,
                " (lower the learning rate?)");
    ++step;
    const int64_t n = batch->images.size(0);
    interval_samples += n;
    run_samples += n;
    interval_loss += loss;
    ++interval_steps;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double rate = static_cast<double>(run_samples) / std::max(elapsed, 1e-9);
    progress.update({.epoch = epoch + 1,
                     .batch = batch->index + 1,
                     .batches_per_epoch = per_epoch,
                     .step = step,
                     .loss = loss,
                     .lr = lr,
                     .samples_per_second = rate,
                     .eta_seconds = static_cast<double>(total_steps - step) * elapsed /
                                    static_cast<double>(std::max<int64_t>(step - first_step, 1))});
    if (step % config_.log_every == 0 || step == total_steps) {
      const double seconds = std::chrono::duration<double>(Clock::now() - interval_start).count();
      summary.last_loss = interval_loss / static_cast<double>(interval_steps);
      metrics.write({{"type", "train"}, {"epoch", epoch}, {"step", step}, {"loss", summary.last_loss}, {"lr", lr},
                     {"samples_per_second", static_cast<double>(interval_samples) / std::max(seconds, 1e-9)}});
      interval_start = Clock::now();
      interval_samples = 0;
      interval_loss = 0;
      interval_steps = 0;
    }
    if (config_.checkpoint_every > 0 && step % config_.checkpoint_every == 0) save(epoch);
    if (stop_requested && stop_requested()) {
      progress.message("interrupted at step " + std::to_string(step));
      save(epoch);
      summary.interrupted = true;
      break;
    }
  }
  progress.finish_epoch();
  if (!summary.interrupted) {
    // The last step is not followed by the loader's end-of-epoch signal: report it here.
    if (config_.eval_every > 0) evaluate_now(epoch + 1);  // the epoch in progress, 1-based
    if (!checkpoints || config_.checkpoint_every == 0 || step % config_.checkpoint_every != 0) save(epoch);
  }
  summary.steps = step;
  summary.epoch = epoch;
  const double total_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  summary.samples_per_second = static_cast<double>(run_samples) / std::max(total_seconds, 1e-9);
  return summary;
}

}  // namespace baton
