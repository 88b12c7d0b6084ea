// Writing files atomically: content goes to a temporary file beside the target, is flushed, then
// renamed over it (and the directory flushed), so a reader (or a crash) never sees a half-written file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace baton {

// Throws baton::Error naming the path and the system error on failure; the target is untouched.
void write_file_atomically(const std::string& path, std::string_view content);

// Streams content into a temporary file beside `path` ("<path>.tmp.XXXXXX"). commit() flushes it to
// disk, renames it over `path` and flushes the directory. Destroyed without a commit (an error on
// the way), it removes the temporary file and leaves `path` untouched. Errors name `path`.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t bytes);
  // Replaces `bytes` already written at `offset` (a header completed once the data is known).
  void overwrite(size_t offset, const void* data, size_t bytes);
  void commit();
  const std::string& path() const { return path_; }

 private:
  void discard() noexcept;

  std::string path_;
  std::string temp_;
  int fd_ = -1;
  size_t size_ = 0;  // bytes written so far
  bool committed_ = false;
};

// Checks, before a run starts, that a file can be written at `path` later: its directory exists
// and a file can be created in it (a probe file, removed at once), and an existing `path` is a
// writable regular file. Errors: "cannot write the WHAT 'PATH': ...".
void check_file_writable(const std::string& path, std::string_view what);
// The same for a directory that is created when missing: the nearest existing ancestor must take
// a new entry, an existing `path` must be a directory taking a new file.
void check_directory_writable(const std::string& path, std::string_view what);

// Flushes a directory's entries to disk, so that a file created or renamed in it survives a crash.
void sync_directory(const std::string& directory);

}  // namespace baton
