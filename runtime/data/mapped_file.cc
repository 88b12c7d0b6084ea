// MappedFile: open + fstat + mmap, with errors that name the file.
#include "runtime/data/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "runtime/core/error.h"

namespace baton::data {

MappedFile::MappedFile(std::string path) : path_(std::move(path)) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  BATON_CHECK(fd >= 0, "cannot open '", path_, "': ", std::strerror(errno));
  struct stat info {};
  const bool stat_ok = ::fstat(fd, &info) == 0;
  const int stat_err = errno;
  if (!stat_ok || !S_ISREG(info.st_mode)) {
    ::close(fd);
    BATON_FAIL("cannot read '", path_, "': ", stat_ok ? "not a regular file" : std::strerror(stat_err));
  }
  size_ = static_cast<size_t>(info.st_size);
  if (size_ > 0) {
    void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    BATON_CHECK(mapped != MAP_FAILED, "cannot map '", path_, "' (", size_, " bytes) into memory: ", std::strerror(err));
    data_ = static_cast<const uint8_t*>(mapped);
  } else {
    ::close(fd);
  }
}

MappedFile::~MappedFile() { unmap(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::unmap() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace baton::data
