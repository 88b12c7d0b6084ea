// MappedFile: a whole file mapped read-only into memory (RAII; unmapped on destruction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace baton::data {

class MappedFile {
 public:
  // Maps `path`; throws baton::Error naming the path and the system error. An empty file maps to
  // no memory (data() is nullptr, size() 0).
  explicit MappedFile(std::string path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void unmap();

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace baton::data
