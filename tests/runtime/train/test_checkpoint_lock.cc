// CheckpointLock: a second run on the same checkpoint directory is refused naming the first (pid,
// host, start), the lock goes with its holder, and the temporary directories of interrupted saves
// are removed when a run takes the directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/train/checkpoint_lock.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

TEST(CheckpointLock, ASecondRunIsRefusedNamingTheFirst) {
  testing::ScratchDir dir("ckpt_lock");
  const std::string root = (dir.path() / "run").string();
  {
    const CheckpointLock first(root);
    EXPECT_ERROR_MENTIONS(
        "the checkpoint directory '" + root + "' is in use by another run (pid " + std::to_string(::getpid()) + " on ",
        CheckpointLock second(root));
  }
  const CheckpointLock again(root);  // released with its holder
  EXPECT_EQ(again.removed_leftovers(), 0);
}

TEST(CheckpointLock, LeftoversOfInterruptedSavesAreRemoved) {
  testing::ScratchDir dir("ckpt_lock_leftovers");
  const fs::path root = dir.path();
  fs::create_directories(root / ".step-00000004.tmp-Ab12Cd");
  std::ofstream(root / ".step-00000004.tmp-Ab12Cd" / "model.safetensors") << "partial";
  fs::create_directories(root / ".step-00000006.tmp-Zz99Yy");
  fs::create_directories(root / "step-00000002");
  std::ofstream(root / "notes.txt") << "kept";
  const CheckpointLock lock(root.string());
  EXPECT_EQ(lock.removed_leftovers(), 2);
  EXPECT_FALSE(fs::exists(root / ".step-00000004.tmp-Ab12Cd"));
  EXPECT_FALSE(fs::exists(root / ".step-00000006.tmp-Zz99Yy"));
  EXPECT_TRUE(fs::exists(root / "step-00000002"));
  EXPECT_TRUE(fs::exists(root / "notes.txt"));
}

}  // namespace
}  // namespace baton
