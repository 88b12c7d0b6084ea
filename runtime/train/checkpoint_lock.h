// CheckpointLock: one run at a time writes a checkpoint directory. The lock is an flock on
// <root>/.lock (released by the kernel when the process ends, however it ends), whose text names
// the holder; taking it also removes the temporary directories of saves a killed run left behind.
#pragma once

#include <string>

namespace baton {

// Creates the checkpoint directory `root` if missing (with its parents); an error naming the cause
// when it cannot be used: a dangling symbolic link, a file, a failure to create.
void create_checkpoint_directory(const std::string& root);

class CheckpointLock {
 public:
  // Creates `root` if missing and takes its lock, or throws naming the run that holds it ("pid 1234
  // on host h since 2026-11-26 14:02:11"). Then removes <root>/.step-*.tmp-* and .step-*.deleting (no
  // save or retention is running: this process holds the lock and has not saved yet) and sets
  // removed_leftovers(). A .lock that is a symbolic link or not a regular file is an error.
  explicit CheckpointLock(const std::string& root);
  ~CheckpointLock();
  CheckpointLock(const CheckpointLock&) = delete;
  CheckpointLock& operator=(const CheckpointLock&) = delete;

  // How many leftover temporary directories were removed.
  int removed_leftovers() const { return removed_; }

 private:
  int fd_ = -1;
  int removed_ = 0;
};

}  // namespace baton
