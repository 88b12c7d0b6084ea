// RecordFile: a regular file opened read-only for positional reads (RAII descriptor). A read past
// the end — the file truncated while a run reads it — is an error naming the file, where a memory
// mapping would end the process with SIGBUS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace baton::data {

class RecordFile {
 public:
  // Opens `path`; throws baton::Error naming the path and the system error.
  explicit RecordFile(std::string path);
  ~RecordFile();
  RecordFile(RecordFile&& other) noexcept;
  RecordFile& operator=(RecordFile&& other) noexcept;
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  const std::string& path() const { return path_; }
  // The size when it was opened.
  size_t size() const { return size_; }
  // Copies `bytes` bytes from `offset` into `out` (safe from several threads at once). Throws
  // naming the file when they are not all there any more (the file shrank since it was opened) or
  // the read fails.
  void read(size_t offset, void* out, size_t bytes) const;

 private:
  void close();

  std::string path_;
  int fd_ = -1;
  size_t size_ = 0;
};

}  // namespace baton::data
