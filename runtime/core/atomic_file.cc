// AtomicFileWriter and write_file_atomically: temp file + fsync + rename + fsync of the directory.
#include "runtime/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "runtime/core/error.h"

namespace baton {

void write_file_atomically(const std::string& path, std::string_view content) {
  AtomicFileWriter writer(path);
  writer.write(content.data(), content.size());
  writer.commit();
}

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)), temp_(path_ + ".tmp.XXXXXX") {
  fd_ = mkstemp(temp_.data());
  BATON_CHECK(fd_ >= 0, "cannot write '", path_,
              "': creating a temporary file beside it failed: ", std::strerror(errno));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!committed_) discard();
}

void AtomicFileWriter::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::remove(temp_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t bytes) {
  overwrite(size_, data, bytes);
  size_ += bytes;
}

void AtomicFileWriter::overwrite(size_t offset, const void* data, size_t bytes) {
  BATON_CHECK(fd_ >= 0 && !committed_, "cannot write '", path_, "': the file was already committed");
  const auto* p = static_cast<const char*>(data);
  size_t written = 0;
  while (written < bytes) {
    const ssize_t n = ::pwrite(fd_, p + written, bytes - written, static_cast<off_t>(offset + written));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      discard();
      BATON_FAIL("cannot write '", path_, "': ", std::strerror(err));
    }
    written += static_cast<size_t>(n);
  }
}

void AtomicFileWriter::commit() {
  BATON_CHECK(fd_ >= 0 && !committed_, "cannot write '", path_, "': the file was already committed");
  if (::fsync(fd_) != 0) {
    const int err = errno;
    discard();
    BATON_FAIL("cannot write '", path_, "': fsync failed: ", std::strerror(err));
  }
  ::fchmod(fd_, 0644);
  ::close(fd_);
  fd_ = -1;
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    discard();
    BATON_FAIL("cannot write '", path_, "': renaming the temporary file failed: ", std::strerror(err));
  }
  committed_ = true;
  const std::string parent = std::filesystem::path(path_).parent_path().string();
  sync_directory(parent.empty() ? "." : parent);
}

void sync_directory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  BATON_CHECK(fd >= 0, "cannot open directory '", directory, "' to flush it: ", std::strerror(errno));
  const bool synced = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  BATON_CHECK(synced, "cannot flush directory '", directory, "': ", std::strerror(err));
}

namespace {

// Creates and removes a probe file in `dir`; the error, or "".
std::string probe_directory(const std::filesystem::path& dir) {
  std::string pattern = (dir / ".baton-write-probe-XXXXXX").string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) return std::strerror(errno);
  ::close(fd);
  ::unlink(pattern.c_str());
  return "";
}

}  // namespace

void check_file_writable(const std::string& path, std::string_view what) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  BATON_CHECK(fs::is_directory(dir, ec), "cannot write the ", what, " '", path, "': ", dir.string(),
              fs::exists(dir, ec) ? " is not a directory" : " does not exist");
  if (fs::exists(target, ec)) {
    BATON_CHECK(fs::is_regular_file(target, ec), "cannot write the ", what, " '", path, "': it is not a regular file");
    BATON_CHECK(::access(path.c_str(), W_OK) == 0, "cannot write the ", what, " '", path, "': ", std::strerror(errno));
  }
  const std::string problem = probe_directory(dir);
  BATON_CHECK(problem.empty(), "cannot write the ", what, " '", path, "': cannot create files in ", dir.string(), " (",
              problem, ")");
}

void check_directory_writable(const std::string& path, std::string_view what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir(path);
  if (fs::exists(dir, ec)) {
    BATON_CHECK(fs::is_directory(dir, ec), "cannot use the ", what, " '", path, "': it is not a directory");
  } else {
    dir = fs::absolute(dir, ec).parent_path();
    while (!dir.empty() && !fs::exists(dir, ec)) dir = dir.parent_path();
    BATON_CHECK(fs::is_directory(dir, ec), "cannot create the ", what, " '", path, "': ", dir.string(),
                " is not a directory");
  }
  const std::string problem = probe_directory(dir);
  BATON_CHECK(problem.empty(), "cannot use the ", what, " '", path, "': cannot create files in ", dir.string(), " (",
              problem, ")");
}

}  // namespace baton
