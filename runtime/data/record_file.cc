// RecordFile: open_regular_file + fstat, then pread, with errors that name the file.
#include "runtime/data/record_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/core/regular_file.h"

namespace baton::data {

RecordFile::RecordFile(std::string path) : path_(std::move(path)) {
  fd_ = open_regular_file(path_, "cannot open '" + path_ + "'");
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    const int error = errno;
    close();
    BATON_FAIL("cannot read '", path_, "': ", std::strerror(error));
  }
  size_ = static_cast<size_t>(info.st_size);
}

RecordFile::~RecordFile() { close(); }

RecordFile::RecordFile(RecordFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(std::exchange(other.size_, 0)) {}

RecordFile& RecordFile::operator=(RecordFile&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void RecordFile::read(size_t offset, void* out, size_t bytes) const {
  auto* cursor = static_cast<char*>(out);
  size_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::pread(fd_, cursor + done, bytes - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    BATON_CHECK(got >= 0, "cannot read '", path_, "' at byte offset ", offset + done, ": ", std::strerror(errno));
    BATON_CHECK(got > 0, "'", path_, "' became shorter while in use (truncated or rewritten?): byte ", offset + done,
                " of the ", size_, " it had when opened is gone");
    done += static_cast<size_t>(got);
  }
}

void RecordFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace baton::data
