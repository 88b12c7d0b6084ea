// CheckpointLock: a second run on the same checkpoint directory is refused naming the first (pid,
// host, start), the lock goes with its holder, and the temporary directories of interrupted saves
// are removed when a run takes the directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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

// A checkpoint that retention was deleting when its run was killed (".step-N.deleting") is a leftover
// too: a whole checkpoint that no run would otherwise remove or report.
TEST(CheckpointLock, CheckpointsLeftHalfDeletedAreRemoved) {
  testing::ScratchDir dir("ckpt_lock_deleting");
  const fs::path root = dir.path();
  fs::create_directories(root / ".step-00000001.deleting");
  std::ofstream(root / ".step-00000001.deleting" / "model.safetensors") << "a whole checkpoint";
  const CheckpointLock lock(root.string());
  EXPECT_EQ(lock.removed_leftovers(), 1);
  EXPECT_FALSE(fs::exists(root / ".step-00000001.deleting"));
}

// A .lock that is a symbolic link is refused, and what it points at is left as it was.
TEST(CheckpointLock, ALockThatIsASymbolicLinkIsNeverFollowed) {
  testing::ScratchDir dir("ckpt_lock_symlink");
  const fs::path root = dir.path() / "ck";
  fs::create_directories(root);
  std::ofstream(dir.path() / "precious.txt") << "precious";
  fs::create_symlink(dir.path() / "precious.txt", root / ".lock");
  EXPECT_ERROR_MENTIONS("it is a symbolic link, which a run never follows", CheckpointLock(root.string()));
  std::ifstream in(dir.path() / "precious.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "precious");
}

}  // namespace
}  // namespace baton
