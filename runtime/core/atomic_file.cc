// write_file_atomically: temp file + fsync + rename.
#include "runtime/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/core/error.h"

namespace baton {

void write_file_atomically(const std::string& path, std::string_view content) {
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(temp.data());
  BATON_CHECK(fd >= 0, "cannot write '", path, "': creating a temporary file beside it failed: ", std::strerror(errno));
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      std::remove(temp.c_str());
      BATON_FAIL("cannot write '", path, "': ", std::strerror(err));
    }
    written += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int sync_err = errno;
  ::close(fd);
  if (!synced) {
    std::remove(temp.c_str());
    BATON_FAIL("cannot write '", path, "': fsync failed: ", std::strerror(sync_err));
  }
  ::chmod(temp.c_str(), 0644);
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(temp.c_str());
    BATON_FAIL("cannot write '", path, "': renaming the temporary file failed: ", std::strerror(err));
  }
}

}  // namespace baton
