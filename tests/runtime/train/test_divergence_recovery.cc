// Divergence recovery: a run that diverges slowly with a checkpoint every step and two kept still
// has its newest healthy checkpoint (retention keeps it, the diverged ones are set aside), the
// message names it, a resume from it trains on healthily, and the divergence baseline is carried
// across resumes so that resuming a diverged checkpoint is stopped again. A fresh run into another
// run's checkpoint directory is refused, or replaces that run's checkpoints with --overwrite.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "runtime/data/dataset.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/trainer.h"
#include "tests/runtime/train/tiny_linear_model.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBatch = 8;

// Resumed at step 3, a learning rate 10 times larger every step (0.05 at step 3): the loss of a
// linear classifier climbs about tenfold a step, finite for several checkpoints before it passes
// 10^4 times the first.
const nlohmann::json kDivergingSchedule = {{"type", "step"}, {"base_lr", 5e-5}, {"step_size", 1}, {"gamma", 10.0}};
const nlohmann::json kHealthySchedule = {{"type", "constant"}, {"base_lr", 0.05}};

class RunCheckpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    train_ = data::open_dataset("synthetic:3x4x4:4:512", data::Split::train, 0);
    config_.batch_size = kBatch;
    config_.eval_every = 0;
    config_.workers = 1;
    config_.checkpoint_every = 1;
    config_.keep_checkpoints = 2;
  }

  // `steps` steps (in all, counting the resumed ones) with learning-rate schedule `schedule`.
  TrainSummary train(int64_t steps, const nlohmann::json& schedule, bool resume) {
    TrainConfig config = config_;
    config.checkpoint_dir = root_;
    config.steps = steps;
    config.resume = resume;
    config.lr_schedule = schedule;
    return Trainer(graph_, config, *train_, nullptr, Device::cpu()).run(nullptr);
  }

  std::string step_dir(int64_t step) const {
    return (fs::path(root_) / ("step-0000000" + std::to_string(step))).string();
  }

  testing::ScratchDir dir_{"divergence_recovery"};
  const std::string root_ = (dir_.path() / "ckpt").string();
  const Graph graph_ = testing::tiny_linear_model(kBatch);
  TrainConfig config_;
  std::unique_ptr<data::Dataset> train_;
};

TEST_F(RunCheckpoints, TheHealthyCheckpointSurvivesASlowDivergenceAndResumesHealthily) {
  train(3, kHealthySchedule, false);
  // Losses 1.2, 1.5, 3.2 | 13, 176, 1803, 29837: checkpoint 5 (followed by 3.2) is the newest healthy
  // one; checkpoints 6 to 9 are followed by losses over 4 times the first, 1.58.
  EXPECT_ERROR_MENTIONS(
      "training diverged: the loss is 29837.3 at step 10, over 10000 times this run's first, "
      "1.57568 (lower the learning rate?); the newest healthy checkpoint, " +
          step_dir(5) + ", is from before it; the 2 newer one(s) were set aside (" + step_dir(9) +
          ".diverged, ...): --resume " + root_ + " continues from it",
      train(40, kDivergingSchedule, true));
  EXPECT_TRUE(fs::exists(fs::path(step_dir(5)) / kModelFileName)) << "retention deleted the healthy checkpoint";
  EXPECT_EQ(CheckpointManager(root_, 2).latest(), step_dir(5)) << "the diverged checkpoints were not set aside";
  EXPECT_TRUE(fs::exists(step_dir(8) + ".diverged")) << "a diverged checkpoint was deleted, not set aside";

  const TrainSummary resumed = train(10, kHealthySchedule, true);  // from checkpoint 5, with a lower rate
  EXPECT_EQ(resumed.steps, 10);
  EXPECT_LT(resumed.last_loss, 4 * 1.57568);
}

TEST_F(RunCheckpoints, ResumingADivergedCheckpointIsStoppedAgain) {
  config_.keep_checkpoints = 100;
  train(3, kHealthySchedule, false);
  train(9, kDivergingSchedule, true);  // losses up to 1803, under 10^4 times the first: the run ends "done"
  // Checkpoint 9's loss, 29837, is over 10^4 times the first run's first loss, whatever rate follows;
  // measured against the first loss resumed instead, a run at a huge rate would go on.
  const nlohmann::json huge_rate = {{"type", "constant"}, {"base_lr", 5000.0}};
  EXPECT_ERROR_MENTIONS("training diverged: the loss is 29837.3 at step 10, over 10000 times this run's first, 1.57568",
                        train(40, huge_rate, true));
}

TEST_F(RunCheckpoints, AFreshRunIntoAnotherRunsDirectoryIsRefusedUnlessOverwriting) {
  train(3, kHealthySchedule, false);
  EXPECT_ERROR_MENTIONS(
      "the checkpoint directory '" + root_ + "' holds another run's checkpoints (the newest, " + step_dir(3) + ")",
      train(2, kHealthySchedule, false));
  EXPECT_TRUE(fs::exists(fs::path(step_dir(3)) / kModelFileName)) << "the refused run deleted a checkpoint";
  config_.overwrite = true;
  EXPECT_EQ(train(2, kHealthySchedule, false).steps, 2);
  EXPECT_FALSE(fs::exists(step_dir(3))) << "the other run's checkpoint was left beside this run's";
  EXPECT_EQ(CheckpointManager(root_, 2).latest(), step_dir(2));
}

}  // namespace
}  // namespace baton
