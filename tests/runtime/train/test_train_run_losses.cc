// How the training loop reads its losses (on an engine that returns scripted ones): a step's loss is
// read after the next step has been issued, or at the next checkpoint or the end, and the logged
// numbers, steps and epochs are exactly the steps'; divergence (a loss not finite, or exploding)
// names the step that diverged (1-based, as logged) even though a later step was issued already,
// and stops the run before its checkpoint is written.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/train/trainer.h"
#include "tests/runtime/train/tiny_linear_model.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

constexpr int64_t kBatch = 8;

// A TrainEngine whose step k returns losses[k] and records what the loop asked of it.
class ScriptedEngine final : public TrainEngine {
 public:
  explicit ScriptedEngine(std::vector<double> losses) : losses_(std::move(losses)) {}
  Context& input_context() override { return ctx_; }
  void initialize(uint64_t) override {}
  PendingLoss step(const data::Batch&, uint64_t, double) override {
    return PendingLoss(losses_.at(static_cast<size_t>(steps++)));
  }
  EvalResult evaluate(const data::Dataset&, int64_t, int) override { return {}; }
  std::string save_checkpoint(CheckpointManager&, const CheckpointState& state) override {
    saved_at.push_back(state.step);
    return "scripted";
  }
  CheckpointState load_checkpoint(const std::string&) override { return {}; }
  void load_weights(const std::string&) override {}

  int steps = 0;
  std::vector<int64_t> saved_at;

 private:
  Context ctx_{Device::cpu()};
  std::vector<double> losses_;
};

class TrainRunLosses : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.data = "synthetic:3x4x4:4:32";  // 4 batches per epoch
    config_.batch_size = kBatch;
    config_.steps = 6;
    config_.log_every = 1;
    config_.eval_every = 0;
    config_.workers = 1;
    config_.metrics = (dir_.path() / "metrics.jsonl").string();
    train_ = data::open_dataset(config_.data, data::Split::train, 0);
  }

  std::vector<nlohmann::json> train_lines() const {
    std::vector<nlohmann::json> lines;
    std::ifstream in(config_.metrics);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line);
      if (j["type"] == "train") lines.push_back(std::move(j));
    }
    return lines;
  }

  testing::ScratchDir dir_{"train_run_losses"};
  const Graph graph_ = testing::tiny_linear_model(kBatch);
  TrainConfig config_;
  std::unique_ptr<data::Dataset> train_;
};

TEST_F(TrainRunLosses, EveryStepIsLoggedWithItsOwnLossStepAndEpoch) {
  const std::vector<double> losses = {2.5, 2.25, 2.0, 1.75, 1.5, 1.25};
  ScriptedEngine engine(losses);
  const TrainSummary summary = Trainer(graph_, config_, *train_, nullptr, engine).run(nullptr);
  EXPECT_EQ(engine.steps, 6);
  const std::vector<nlohmann::json> lines = train_lines();
  ASSERT_EQ(lines.size(), 6u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["loss"].get<double>(), losses[i]) << "line " << i;
    EXPECT_EQ(lines[i]["step"].get<int64_t>(), static_cast<int64_t>(i) + 1);
    EXPECT_EQ(lines[i]["epoch"].get<int64_t>(), i < 4 ? 0 : 1);
  }
  EXPECT_EQ(summary.last_loss, 1.25);
  EXPECT_EQ(summary.steps, 6);
}

TEST_F(TrainRunLosses, MeansOverLogIntervalsAreUnchanged) {
  config_.log_every = 4;
  ScriptedEngine engine({1.0, 2.0, 3.0, 4.0, 10.0, 20.0});
  Trainer(graph_, config_, *train_, nullptr, engine).run(nullptr);
  const std::vector<nlohmann::json> lines = train_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["loss"].get<double>(), 2.5);
  EXPECT_EQ(lines[0]["step"].get<int64_t>(), 4);
  EXPECT_EQ(lines[1]["loss"].get<double>(), 15.0);  // the last step closes the interval
  EXPECT_EQ(lines[1]["step"].get<int64_t>(), 6);
}

TEST_F(TrainRunLosses, DivergenceNamesTheStepThatDivergedAndStopsTheRun) {
  ScriptedEngine engine({2.0, 1.9, std::numeric_limits<double>::quiet_NaN(), 1.7, 1.6, 1.5});
  EXPECT_ERROR_MENTIONS(
      "training diverged: the loss is nan at step 3 (lower the learning rate?); there is no checkpoint to go "
      "back to",
      Trainer(graph_, config_, *train_, nullptr, engine).run(nullptr));
  EXPECT_EQ(engine.steps, 4) << "the step after the diverged one is issued before its loss is read";
  EXPECT_EQ(train_lines().size(), 2u);

  // The last step of an epoch is read at the epoch's end, before the next epoch's first step.
  ScriptedEngine at_epoch_end({2.0, 1.9, 1.8, std::numeric_limits<double>::quiet_NaN(), 1.6, 1.5});
  EXPECT_ERROR_MENTIONS("training diverged: the loss is nan at step 4",
                        Trainer(graph_, config_, *train_, nullptr, at_epoch_end).run(nullptr));
  EXPECT_EQ(at_epoch_end.steps, 4);
}

// Losses of 1e11 pass every isfinite check; 10^4 times the run's first loss (or 1) is divergence.
TEST_F(TrainRunLosses, AnExplodingLossIsDivergenceToo) {
  ScriptedEngine exploding({2.0, 30.0, 1e11, 1e22, 1e33, 1.5});
  EXPECT_ERROR_MENTIONS("training diverged: the loss is 1e+11 at step 3, over 10000 times this run's first, 2",
                        Trainer(graph_, config_, *train_, nullptr, exploding).run(nullptr));
  ScriptedEngine small({1e-3, 9000.0, 1.0, 1.0, 1.0, 1.0});  // under 10^4 x max(1, first)
  EXPECT_EQ(Trainer(graph_, config_, *train_, nullptr, small).run(nullptr).steps, 6);
}

TEST_F(TrainRunLosses, ACheckpointWaitsForTheLossOfTheStepItSaves) {
  config_.checkpoint_dir = (dir_.path() / "ckpt").string();
  config_.checkpoint_every = 2;
  ScriptedEngine diverging({2.0, 1.9, 1.8, std::numeric_limits<double>::infinity(), 1.6, 1.5});
  EXPECT_ERROR_MENTIONS("training diverged: the loss is inf at step 4",
                        Trainer(graph_, config_, *train_, nullptr, diverging).run(nullptr));
  EXPECT_EQ(diverging.saved_at, std::vector<int64_t>{2}) << "the diverged step 4 was saved";

  ScriptedEngine fine({2.0, 1.9, 1.8, 1.7, 1.6, 1.5});
  int calls = 0;
  const TrainSummary stopped = Trainer(graph_, config_, *train_, nullptr, fine).run([&] { return ++calls == 3; });
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(fine.saved_at, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(train_lines().size(), 3u + 3u) << "every step before the interruption is logged (the runs append)";
}

}  // namespace
}  // namespace baton
