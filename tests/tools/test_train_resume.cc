// `baton train --resume DIR` continues the saved run with its own settings (model, data, batch,
// seed, optimiser, schedule, length), flags overriding what is safe to change; contradicting
// overrides, a step-… directory that is not the newest, directories holding incomplete checkpoints
// or no checkpoint at all, and --checkpoint-dir elsewhere are one-line errors that start nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;

class TrainResume : public CliTest {
 protected:
  void SetUp() override {
    ckpt_ = (dir_ / "ckpt").string();
    const CliResult first = run_baton(
        "train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 2 "
        "--device cpu --workers 1 --eval-every 0 --log-every 1 --seed 5 "
        "--checkpoint-every 1 --checkpoint-dir " +
        ckpt_);
    ASSERT_EQ(first.exit_code, 0) << first.err;
  }
  std::string ckpt_;
};

TEST_F(TrainResume, ABareResumeContinuesWithTheSavedSettings) {
  const CliResult resumed = run_baton("train --resume " + ckpt_ + " --steps 3");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("resumed from " + ckpt_ + "/step-00000002 at step 2"), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.out.find("synthetic"), std::string::npos) << resumed.out;     // not the default shapes
  EXPECT_NE(resumed.out.find("step 3 (3/8)"), std::string::npos) << resumed.out;  // 64 / batch 8 per epoch
  EXPECT_TRUE(fs::exists(ckpt_ + "/step-00000003"));
  EXPECT_EQ(resumed.err, "");

  const CliResult lr = run_baton("train --resume " + ckpt_ + " --steps 4 --lr 0.5");
  ASSERT_EQ(lr.exit_code, 0) << lr.err;
  EXPECT_NE(lr.err.find("warning: resuming with lr_schedule {\"base_lr\":0.5"), std::string::npos) << lr.err;

  // Channels-last is the default, so the checkpoint has it; --no-channels-last turns it off.
  const CliResult row_major = run_baton("train --resume " + ckpt_ + " --steps 5 --no-channels-last");
  ASSERT_EQ(row_major.exit_code, 0) << row_major.err;
  EXPECT_NE(row_major.err.find("warning: resuming with channels_last false instead of the checkpoint's true"),
            std::string::npos)
      << row_major.err;
}

TEST_F(TrainResume, OverridesThatContradictTheCheckpointAreRefused) {
  expect_one_line_error("train --resume " + ckpt_ + " --batch-size 16",
                        "was trained with batch_size 8, this command asks for 16");
  expect_one_line_error("train --resume " + ckpt_ + " --data shapes", "was trained with data synthetic:3x8x8:4:64");
  expect_one_line_error("train --resume " + ckpt_ + " --model vgg11", "was trained with model resnet20");
  expect_one_line_error("train --resume " + ckpt_ + " --seed 6", "was trained with seed 5");
  expect_one_line_error("train --resume " + ckpt_ + " --optimizer adamw", "was trained with optimizer type sgd");
  expect_one_line_error("train --resume " + ckpt_ + " --checkpoint-dir " + (dir_ / "elsewhere").string(),
                        "give one (a resumed run keeps saving where it resumes from)");
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere"));
}

// The newest step-… directory lost a file: the run resumes from the newest complete one, saying so.
TEST_F(TrainResume, AnIncompleteNewestCheckpointIsPassedOverAloud) {
  fs::remove(ckpt_ + "/step-00000002/optimizer.safetensors");
  const CliResult resumed = run_baton("train --resume " + ckpt_ + " --steps 2");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("warning: passing over the incomplete step-00000002 (no optimizer.safetensors)"),
            std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.out.find("resumed from " + ckpt_ + "/step-00000001 at step 1"), std::string::npos) << resumed.out;
}

TEST_F(TrainResume, DirectoriesThatAreNotTheNewestCheckpointStartNothing) {
  expect_one_line_error("train --resume " + ckpt_ + "/step-00000001",
                        "a newer checkpoint, " + ckpt_ + "/step-00000002, follows it");
  fs::remove(ckpt_ + "/step-00000002/optimizer.safetensors");
  expect_one_line_error("train --resume " + ckpt_ + "/step-00000002",
                        "this checkpoint is incomplete (it has no optimizer.safetensors)");
  const fs::path broken = dir_ / "broken";
  fs::create_directories(broken / "step-00000004");
  expect_one_line_error("train --resume " + broken.string(), "no complete checkpoint, only incomplete ones");
  const fs::path other = dir_ / "other";
  fs::create_directories(other);
  std::ofstream(other / "notes.txt") << "not a checkpoint\n";
  expect_one_line_error("train --resume " + other.string(), "holds files but no checkpoint");
  EXPECT_EQ(std::distance(fs::directory_iterator(other), fs::directory_iterator()), 1);  // nothing written
}

}  // namespace
}  // namespace baton::cli
