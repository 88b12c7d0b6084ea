// `baton train --resume DIR` restores the checkpoint's parallel settings: a hybrid or a pipeline
// resumes as itself, saying so, with the uninterrupted run's losses; a command that names a layout
// replaces it, warning of each field that differs; model averaging's variant and replicas cannot
// change under its state; a plan file is read again (and must be there); checkpoints from before
// the parallel settings were stored resume as before.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/train/safetensors.h"
#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;

// Rewrites a checkpoint's model.safetensors as an older baton wrote it: its train_config without the
// "parallel" object (the header changes; the tensors' bytes, addressed from the data's start, do not).
void drop_stored_parallel(const fs::path& model_file) {
  // Rewritten through the library, so that the file's checksums match its new header.
  Context ctx(Device::cpu());
  NamedTensors tensors;
  std::map<std::string, std::string> metadata;
  {
    const SafetensorsFile file(model_file.string());
    for (const std::string& name : file.names()) tensors.emplace_back(name, file.read(name, ctx.stream()));
    metadata = file.metadata();
  }
  nlohmann::json config = nlohmann::json::parse(metadata["train_config"]);
  ASSERT_TRUE(config.contains("parallel")) << config.dump();
  config.erase("parallel");
  metadata["train_config"] = config.dump();
  save_safetensors(model_file.string(), tensors, metadata, ctx.stream());
}

class TrainResumeLayout : public CliTest {
 protected:
  // `layout` trained for 4 steps, checkpointed after each; `metrics` logs its losses.
  void train(const std::string& layout, const fs::path& checkpoints, const fs::path& metrics) {
    const CliResult r = run_baton(kTrain + layout + " --checkpoint-dir " + checkpoints.string() +
                                  " --checkpoint-every 1 --keep-checkpoints 5 --metrics " + metrics.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // A directory holding `checkpoints`' step 2 alone, to resume from.
  std::string step_two_of(const fs::path& checkpoints, const std::string& name) {
    const fs::path copy = dir_ / name;
    fs::create_directories(copy);
    fs::copy(checkpoints / "step-00000002", copy / "step-00000002", fs::copy_options::recursive);
    return copy.string();
  }

  // Resumes `layout`'s step 2 with no layout flags: the run says it resumes as `described` and
  // logs the last two losses of the uninterrupted run.
  void expect_resumed_as_itself(const std::string& layout, const std::string& described) {
    train(layout, dir_ / "ckpt", dir_ / "full.jsonl");
    const std::string resume = step_two_of(dir_ / "ckpt", "resume");
    const CliResult r = run_baton("train --resume " + resume + " --metrics " + (dir_ / "resumed.jsonl").string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("resuming as " + described + ", the checkpoint's parallel settings"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("resumed from " + resume + "/step-00000002 at step 2"), std::string::npos) << r.out;
    const std::vector<double> full = losses(dir_ / "full.jsonl");
    ASSERT_EQ(full.size(), 4u);
    EXPECT_EQ(losses(dir_ / "resumed.jsonl"), std::vector<double>(full.begin() + 2, full.end()));
  }

  const std::string kTrain =
      "train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 4 --workers 1 --eval-every 0 "
      "--log-every 1 --seed 5 --lr 0.05 --device cpu ";
};

TEST_F(TrainResumeLayout, TheHybridResumesAsTheHybridWithTheUninterruptedLosses) {
  expect_resumed_as_itself("--groups 2 --stages 2", "the hybrid of 2 groups x 2 stages");
}

TEST_F(TrainResumeLayout, APipelineResumesAsThePipelineWithTheUninterruptedLosses) {
  expect_resumed_as_itself("--stages 2 --micro-batches 2 --schedule gpipe", "a pipeline of 2 stages");
}

TEST_F(TrainResumeLayout, ChangesWarnAndALayoutOfTheCommandReplacesTheCheckpoints) {
  train("--groups 2 --stages 2", dir_ / "ckpt", dir_ / "full.jsonl");
  const CliResult micro = run_baton("train --resume " + step_two_of(dir_ / "ckpt", "micro") + " --micro-batches 2");
  ASSERT_EQ(micro.exit_code, 0) << micro.err;
  EXPECT_EQ(micro.err, "warning: resuming with parallel.micro_batches 2 instead of the checkpoint's 0\n");
  EXPECT_NE(micro.out.find("hybrid: 2 groups"), std::string::npos) << micro.out;

  // --device names one device: the hybrid's fields that differ are warned of, and it trains alone.
  const CliResult one = run_baton("train --resume " + step_two_of(dir_ / "ckpt", "one") + " --device cpu");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.err.find("warning: resuming with parallel.stages 0 instead of the checkpoint's 2"), std::string::npos)
      << one.err;
  EXPECT_NE(one.err.find("warning: resuming with parallel.groups 1 instead of the checkpoint's 2"), std::string::npos)
      << one.err;
  EXPECT_EQ(one.out.find("pipeline:"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("resumed from "), std::string::npos) << one.out;
}

TEST_F(TrainResumeLayout, ModelAveragingKeepsItsVariantAndReplicas) {
  train("--data-parallel 2 --model-averaging periodic --average-every 2", dir_ / "ckpt", dir_ / "full.jsonl");
  const std::string resume = "train --resume " + (dir_ / "ckpt").string() + " --steps 5 ";
  expect_one_line_error(resume + "--model-averaging bmuf",
                        "was trained with parallel.model_averaging (--model-averaging) periodic, this command asks "
                        "for bmuf");
  expect_one_line_error(resume + "--data-parallel 4 --model-averaging periodic --average-every 2",
                        "was trained with parallel.data_parallel (--data-parallel) 2, this command asks for 4");
  expect_one_line_error(resume + "--average-every 3",
                        "was trained with parallel.average_every (--average-every) 2, this command asks for 3");
  EXPECT_FALSE(fs::exists(dir_ / "ckpt" / "step-00000005"));
  const CliResult same = run_baton(resume);
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find("resuming as data parallelism over 2 replicas (model averaging periodic)"), std::string::npos)
      << same.out;
}

TEST_F(TrainResumeLayout, APlanFileIsReadAgainAndMustBeThere) {
  const fs::path plan = dir_ / "plan.json";
  const CliResult planned = run_baton(
      "plan --model resnet20 --input 3x8x8 --classes 4 --cluster cpu-4 --batch 8 --stages 2 --groups 2 "
      "--micro-batches 2 --partitioner uniform --json " +
      plan.string());
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  train("--plan " + plan.string(), dir_ / "ckpt", dir_ / "full.jsonl");
  const std::string resume = "train --resume " + step_two_of(dir_ / "ckpt", "resume");
  const CliResult r = run_baton(resume + " --metrics " + (dir_ / "resumed.jsonl").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("resuming as the plan in " + plan.string()), std::string::npos) << r.out;
  const std::vector<double> full = losses(dir_ / "full.jsonl");
  ASSERT_EQ(full.size(), 4u);
  EXPECT_EQ(losses(dir_ / "resumed.jsonl"), std::vector<double>(full.begin() + 2, full.end()));
  fs::remove(plan);
  expect_one_line_error(resume, "was trained with the plan file " + plan.string() + ", which is missing");
}

TEST_F(TrainResumeLayout, ACheckpointWithoutParallelSettingsResumesAsBefore) {
  train("--groups 2 --stages 2", dir_ / "ckpt", dir_ / "full.jsonl");
  const std::string resume = step_two_of(dir_ / "ckpt", "old");
  drop_stored_parallel(fs::path(resume) / "step-00000002" / "model.safetensors");
  const CliResult bare = run_baton("train --resume " + resume + " --steps 3");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(bare.err, "");
  EXPECT_EQ(bare.out.find("pipeline:"), std::string::npos) << bare.out;  // one device, the defaults
  EXPECT_NE(bare.out.find("resumed from " + resume + "/step-00000002 at step 2"), std::string::npos) << bare.out;
  // Flags give the layout, with nothing of the checkpoint's to compare it with.
  const std::string again = step_two_of(dir_ / "ckpt", "old2");
  drop_stored_parallel(fs::path(again) / "step-00000002" / "model.safetensors");
  const CliResult flags = run_baton("train --resume " + again + " --steps 3 --stages 2");
  ASSERT_EQ(flags.exit_code, 0) << flags.err;
  EXPECT_EQ(flags.err, "");
  EXPECT_NE(flags.out.find("pipeline: "), std::string::npos) << flags.out;
}

}  // namespace
}  // namespace baton::cli
