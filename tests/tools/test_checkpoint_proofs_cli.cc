// `baton train --resume` of prepared checkpoints that do not prove themselves: an edited model spec,
// hand-edited metadata, a renamed step directory, a symbolic link, no train_config. Each is one
// line naming the cause, and the checkpoint directory is left as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "runtime/core/context.h"
#include "runtime/train/safetensors.h"
#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;

std::string replace_first(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

class CheckpointProofs : public CliTest {
 protected:
  void SetUp() override {
    spec_ = (dir_ / "spec.json").string();
    ASSERT_EQ(run_baton("export-spec --model resnet20 --batch 8 --classes 4 --input 3x8x8 --out " + spec_).exit_code,
              0);
    ck_ = (dir_ / "ck").string();
    const CliResult run =
        run_baton(std::string(kRun) + spec_ + " --steps 2 --checkpoint-every 1 --checkpoint-dir " + ck_);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    model_file_ = ck_ + "/step-00000002/model.safetensors";
  }

  static constexpr const char* kRun =
      "train --data synthetic:3x8x8:4:64 --batch-size 8 --workers 1 --eval-every 0 --model-spec ";
  std::string spec_, ck_, model_file_;
};

// Resumed silently with the edited model before.
TEST_F(CheckpointProofs, AnEditedModelSpecIsRefusedNamingTheFirstDifference) {
  testing::write_file(spec_, replace_first(testing::read_file(spec_), "\"ReLU\"", "\"Sigmoid\""));
  expect_one_line_error(std::string(kRun) + spec_ + " --steps 3 --resume " + ck_,
                        "field 'type': \"ReLU\" in the checkpoint, \"Sigmoid\" now");
}

// Trained on with batch 9 before.
TEST_F(CheckpointProofs, AHandEditedBatchSizeIsRefused) {
  testing::write_file(model_file_,
                      replace_first(testing::read_file(model_file_), "\\\"batch_size\\\":8", "\\\"batch_size\\\":9"));
  expect_one_line_error(std::string(kRun) + spec_ + " --steps 3 --resume " + ck_,
                        "safetensors file '" + model_file_ + "': the header does not match its checksum");
}

// Resumed "at step 2" from a directory named step 9 before.
TEST_F(CheckpointProofs, ARenamedStepDirectoryIsRefused) {
  fs::remove_all(ck_ + "/step-00000001");
  fs::rename(ck_ + "/step-00000002", ck_ + "/step-00000009");
  expect_one_line_error(std::string(kRun) + spec_ + " --steps 12 --resume " + ck_,
                        "cannot load checkpoint '" + ck_ + "/step-00000009': its name says step 9, its metadata");
}

// Followed before.
TEST_F(CheckpointProofs, ASymlinkedStepDirectoryIsNeverFollowed) {
  fs::rename(ck_ + "/step-00000002", dir_ / "elsewhere");
  fs::create_directory_symlink(dir_ / "elsewhere", ck_ + "/step-00000002");
  expect_one_line_error(std::string(kRun) + spec_ + " --steps 3 --resume " + ck_,
                        "checkpoint directory '" + ck_ + "/step-00000002' is a symbolic link");
}

// "120 missing tensors" before (a default model was built).
TEST_F(CheckpointProofs, NoTrainConfigIsNamed) {
  Context ctx(Device::cpu());
  NamedTensors tensors;
  std::map<std::string, std::string> metadata;
  {
    const SafetensorsFile file(model_file_);
    for (const std::string& name : file.names()) tensors.emplace_back(name, file.read(name, ctx.stream()));
    metadata = file.metadata();
  }
  metadata.erase("train_config");
  save_safetensors(model_file_, tensors, metadata, ctx.stream());
  expect_one_line_error("train --eval-every 0 --steps 3 --resume " + ck_,
                        "--resume: checkpoint file '" + model_file_ + "' has no metadata 'train_config'");
}

}  // namespace
}  // namespace baton::cli
