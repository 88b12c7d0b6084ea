// open_regular_file / read_regular_file: non-blocking open, then a file-type check, then blocking reads.
#include "runtime/core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/core/error.h"

namespace baton {
namespace {

std::string_view file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

int open_regular_file(const std::string& path, std::string_view failure) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  BATON_CHECK(fd >= 0, failure, ": ", std::strerror(errno));
  struct stat info {};
  const bool stat_ok = ::fstat(fd, &info) == 0;
  const int stat_error = errno;
  if (!stat_ok || !S_ISREG(info.st_mode)) {
    ::close(fd);
    BATON_FAIL(failure, ": ",
               stat_ok ? std::string(file_kind(info.st_mode)) + ", expected a regular file"
                       : std::string(std::strerror(stat_error)));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int error = errno;
    ::close(fd);
    BATON_FAIL(failure, ": ", std::strerror(error));
  }
  return fd;
}

std::string read_regular_file(const std::string& path, std::string_view failure) {
  const int fd = open_regular_file(path, failure);
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      BATON_FAIL(failure, ": ", std::strerror(error));
    }
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

}  // namespace baton
