// SIGTERM and SIGINT stop `baton train` within seconds in every phase: during an evaluation (the
// steps done are saved, exit 0, "stopped after"), and during the profiling before a pipelined run
// (nothing to save: exit 128 + the signal, one line naming the phase).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

class TrainSignals : public CliTest {
 protected:
  // Waits (up to 5 minutes) until DIR/<file> holds `text`; false when it never does.
  bool wait_for_text(const std::string& file, const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + seconds(300);
    while (std::chrono::steady_clock::now() < deadline) {
      if (read_file_text(dir_ / file).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
};

// A test split of two million samples takes far longer than the bound to evaluate: the stop cuts it
// short, the step is saved and the run says it stopped.
TEST_F(TrainSignals, SigtermDuringEvaluationSavesAndStopsPromptly) {
  const fs::path checkpoints = dir_ / "ckpt", metrics = dir_ / "metrics.jsonl";
  const pid_t pid = start_baton(
      "train --model resnet20 --data synthetic:3x32x32:10:2000000 --device cpu --workers 1 "
      "--batch-size 8 --steps 1 --log-every 1 --eval-every 1 --checkpoint-dir " +
          checkpoints.string() + " --metrics " + metrics.string(),
      "eval");
  // The step's metrics line is written just before the final evaluation starts.
  ASSERT_TRUE(wait_for_text("metrics.jsonl", "\"train\"")) << read_file_text(dir_ / "eval.err");
  std::this_thread::sleep_for(seconds(2));  // well into the evaluation
  const auto signalled = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  ASSERT_EQ(wait_for(pid, seconds(120)), 0) << read_file_text(dir_ / "eval.err");
  EXPECT_LT(std::chrono::steady_clock::now() - signalled, seconds(60));
  const std::string out = read_file_text(dir_ / "eval.out");
  EXPECT_NE(out.find("stopped after 1 steps"), std::string::npos) << out;
  EXPECT_EQ(out.find("test loss"), std::string::npos) << out;  // a partial evaluation is not reported
  EXPECT_NE(out.find("checkpoint: "), std::string::npos) << out;
  EXPECT_EQ(read_file_text(metrics).find("\"eval\""), std::string::npos);
  EXPECT_TRUE(fs::exists(checkpoints / "step-00000001")) << out;
}

// Profiling a pipeline's model on 128-px images in micro-batches of 16 takes seconds a pass: the stop
// ends it at the next pass; nothing was trained, so nothing is saved.
TEST_F(TrainSignals, SigintDuringProfilingStopsBeforeTraining) {
  const fs::path checkpoints = dir_ / "ckpt";
  const pid_t pid = start_baton(
      "train --model resnet20 --data synthetic:3x128x128:10:64 --device cpu --workers 1 "
      "--batch-size 16 --micro-batches 1 --steps 1 --eval-every 0 --stages 2 "
      "--checkpoint-dir " +
          checkpoints.string(),
      "profile");
  ASSERT_TRUE(wait_for_text("profile.out", "profiling ")) << read_file_text(dir_ / "profile.err");
  const auto signalled = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pid, SIGINT), 0);
  EXPECT_EQ(wait_for(pid, seconds(120)), 128 + SIGINT) << read_file_text(dir_ / "profile.err");
  EXPECT_LT(std::chrono::steady_clock::now() - signalled, seconds(60));
  const std::string err = read_file_text(dir_ / "profile.err");
  EXPECT_NE(err.find("baton train: stopped by SIGINT while profiling resnet20: nothing was trained or saved"),
            std::string::npos)
      << err;
  EXPECT_EQ(read_file_text(dir_ / "profile.out").find("step 1"), std::string::npos);
  EXPECT_FALSE(fs::exists(checkpoints / "step-00000001"));
}

}  // namespace
}  // namespace baton::cli
