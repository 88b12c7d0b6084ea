// CheckpointLock: flock(LOCK_EX | LOCK_NB) on <root>/.lock (a regular file, never a link followed), the
// holder's pid, host and start time written into it, and the leftovers of interrupted saves and
// deletions removed.
#include "runtime/train/checkpoint_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "runtime/core/error.h"
#include "runtime/core/log.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

std::string holder_text() {
  char host[256] = "?";
  ::gethostname(host, sizeof(host) - 1);
  const std::time_t now = std::time(nullptr);
  char when[32] = "?";
  std::tm local{};
  if (::localtime_r(&now, &local) != nullptr) std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &local);
  return "pid " + std::to_string(::getpid()) + " on " + host + " since " + when;
}

std::string read_holder(int fd) {
  char text[512] = {};
  const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  std::string holder = n > 0 ? std::string(text, static_cast<size_t>(n)) : "another process";
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
  return holder;
}

// ".step-00000004.tmp-Ab12Cd": a save's temporary directory; ".step-00000002.deleting": a checkpoint
// that retention was deleting when the run was killed.
bool is_leftover(const std::string& name) {
  return name.starts_with(".step-") && (name.find(".tmp-") != std::string::npos || name.ends_with(".deleting"));
}

}  // namespace

void create_checkpoint_directory(const std::string& root) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(root, ec)) && !fs::exists(root, ec)) {
    BATON_FAIL("cannot use the checkpoint directory '", root, "': it is a symbolic link to '",
               fs::read_symlink(root, ec).string(), "', which does not exist; create the target or remove the link");
  }
  fs::create_directories(root, ec);
  BATON_CHECK(!ec, "cannot create the checkpoint directory '", root, "': ", ec.message());
  BATON_CHECK(fs::is_directory(root, ec), "cannot use '", root, "' as the checkpoint directory: it is not a directory");
}

CheckpointLock::CheckpointLock(const std::string& root) {
  create_checkpoint_directory(root);
  std::error_code ec;
  const std::string path = (fs::path(root) / ".lock").string();
  // O_NOFOLLOW: a .lock that is a symbolic link is refused, never followed (its target overwritten).
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  BATON_CHECK(fd_ >= 0, "cannot use the checkpoint directory '", root, "': opening ", path, ": ",
              errno == ELOOP ? std::string("it is a symbolic link, which a run never follows; remove it")
                             : std::string(std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    BATON_FAIL("cannot use the checkpoint directory '", root, "': ", path, " is not a regular file; remove it");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string holder = err == EWOULDBLOCK ? read_holder(fd_) : "";
    ::close(fd_);
    fd_ = -1;
    BATON_CHECK(err != EWOULDBLOCK, "the checkpoint directory '", root, "' is in use by another run (", holder,
                "): two runs writing one directory would replace each other's checkpoints; use another "
                "--checkpoint-dir, or wait for that run to end");
    BATON_FAIL("cannot lock the checkpoint directory '", root, "' (", path, "): ", std::strerror(err));
  }
  const std::string holder = holder_text() + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, holder.data(), holder.size(), 0) < 0) {
    log_warn("could not write the holder into ", path, ": ", std::strerror(errno));
  }
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_leftover(it->path().filename().string())) continue;
    std::error_code remove_ec;
    fs::remove_all(it->path(), remove_ec);
    if (remove_ec) {
      log_warn("could not remove the leftover '", it->path().string(), "': ", remove_ec.message());
    } else {
      ++removed_;
    }
  }
}

CheckpointLock::~CheckpointLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace baton
