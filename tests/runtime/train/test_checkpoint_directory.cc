// The checkpoint directory: retention keeps the newest, saving a step again replaces it whole, latest()
// ignores temporary and incomplete directories, and failed saves (a full disk, a misshapen optimiser state)
// leave earlier checkpoints intact and no leftovers.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "runtime/train/checkpoint.h"
#include "tests/runtime/train/checkpoint_test_run.h"
#include "tests/runtime/train/file_test_support.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::CheckpointRun;
using testing::kSgd;
std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> names_of(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) out.push_back(fs::path(p).filename().string());
  return out;
}

TEST(Checkpoint, RetentionKeepsTheNewestAndNeverTheOneJustWritten) {
  testing::ScratchDir dir("ckpt_retention");
  CheckpointRun run(kSgd);
  const CheckpointManager manager(dir.path().string(), 2);
  for (int64_t step : {1, 2, 3, 4}) run.save(manager, step);
  EXPECT_EQ(names_of(manager.list()), (std::vector<std::string>{"step-00000003", "step-00000004"}));
  EXPECT_EQ(entries_of(dir.path()), (std::vector<std::string>{"step-00000003", "step-00000004"}));
  // An older step saved after a rollback is kept, with the newest other one.
  run.save(manager, 2);
  EXPECT_EQ(names_of(manager.list()), (std::vector<std::string>{"step-00000002", "step-00000004"}));

  testing::ScratchDir all("ckpt_retention_all");
  const CheckpointManager keep_all(all.path().string(), 0);
  for (int64_t step : {1, 2, 3}) run.save(keep_all, step);
  EXPECT_EQ(keep_all.list().size(), 3u);
  EXPECT_ERROR_MENTIONS("keep_last must be >= 0", CheckpointManager(all.path().string(), -1));
}

TEST(Checkpoint, SavingTheSameStepAgainReplacesItWhole) {
  testing::ScratchDir dir("ckpt_same_step");
  CheckpointRun run(kSgd);
  const CheckpointManager manager(dir.path().string(), 2);
  run.randomize(1);
  run.save(manager, 5);
  run.randomize(2);
  const std::string path = run.save(manager, 5);
  EXPECT_EQ(entries_of(dir.path()), std::vector<std::string>{"step-00000005"});
  CheckpointRun loaded(kSgd);
  CheckpointManager::load(path, loaded.params, loaded.optimizer.get(), loaded.ctx);
  EXPECT_EQ(loaded.snapshot(), run.snapshot());
}

TEST(Checkpoint, LatestIgnoresTemporaryAndIncompleteDirectories) {
  testing::ScratchDir dir("ckpt_latest");
  CheckpointRun run(kSgd);
  const CheckpointManager manager(dir.path().string(), 5);
  EXPECT_FALSE(manager.latest().has_value());
  const std::string saved = run.save(manager, 5);
  // An interrupted save of step 9 (hidden temporary directory, both files already there), a
  // step-10 directory with one file, names that are not checkpoints, and a regular file.
  const fs::path temp = dir.path() / ".step-00000009.tmp-abc123";
  fs::create_directories(temp);
  fs::copy(saved, temp, fs::copy_options::recursive);
  fs::create_directories(dir.path() / "step-00000010");
  fs::copy(saved + "/model.safetensors", dir.path() / "step-00000010");
  fs::create_directories(dir.path() / "step-0000001x");
  fs::copy(saved, dir.path() / "step-0000001x", fs::copy_options::recursive);
  testing::write_file(dir.file("step-00000011"), "not a directory");
  EXPECT_EQ(manager.latest(), saved);
  EXPECT_EQ(manager.list(), std::vector<std::string>{saved});
}

// Limits the size of files this process writes (RLIMIT_FSIZE, with SIGXFSZ ignored so writes fail
// with EFBIG instead): a disk that fills up in the middle of a save.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &old_limit_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_limit_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &old_limit_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_limit_{};
  void (*old_handler_)(int) = nullptr;
};

// An optimiser whose state is not laid out like the parameters.
class MisshapenOptimizer final : public Optimizer {
 public:
  std::string_view type() const override { return "misshapen"; }
  void step(Context& /*ctx*/, double /*lr*/) override {}
  std::vector<std::pair<std::string, Tensor>> state() const override {
    return {{"m", Tensor::empty_host(Shape{3}, DType::f32)}};
  }
  nlohmann::json config() const override { return nlohmann::json::object(); }
};

TEST(Checkpoint, FailedSavesLeaveEarlierCheckpointsIntactAndNoLeftovers) {
  testing::ScratchDir dir("ckpt_failed_save");
  CheckpointRun run(kSgd);
  run.randomize(1);
  const CheckpointManager manager(dir.path().string(), 1);
  const std::string first = run.save(manager, 1);
  const std::string model_bytes = testing::read_file(first + "/model.safetensors");
  const std::string optimizer_bytes = testing::read_file(first + "/optimizer.safetensors");
  run.randomize(2);
  for (int64_t step : {2, 1}) {  // a new step, and a replacement of the existing one
    std::string message;
    {
      FileSizeLimit limit(600);  // the model file's header alone is larger
      message = testing::error_message([&] { run.save(manager, step); });
    }
    EXPECT_NE(message.find("File too large"), std::string::npos) << message;
    EXPECT_NE(message.find(dir.file(step == 2 ? "step-00000002" : "step-00000001")), std::string::npos) << message;
    EXPECT_EQ(entries_of(dir.path()), std::vector<std::string>{"step-00000001"}) << "step " << step;
    EXPECT_EQ(testing::read_file(first + "/model.safetensors"), model_bytes);
    EXPECT_EQ(testing::read_file(first + "/optimizer.safetensors"), optimizer_bytes);
    EXPECT_EQ(manager.latest(), first);
  }
  const MisshapenOptimizer misshapen;
  EXPECT_ERROR_MENTIONS("optimiser state 'm' is not laid out like the parameters",
                        manager.save(run.params, misshapen, run.state(3), run.ctx));
  EXPECT_EQ(entries_of(dir.path()), std::vector<std::string>{"step-00000001"});
  CheckpointRun loaded(kSgd);
  CheckpointManager::load(first, loaded.params, loaded.optimizer.get(), loaded.ctx);
  run.randomize(1);
  EXPECT_EQ(loaded.snapshot(), run.snapshot());
}

}  // namespace
}  // namespace baton
