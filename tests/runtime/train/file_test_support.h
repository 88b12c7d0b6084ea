// File helpers for the safetensors and checkpoint tests: a scratch directory removed afterwards,
// whole-file reads and writes, and a safetensors file assembled byte by byte from header text.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace baton::testing {

// A fresh directory under the system's temporary directory, removed with its contents at the end.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() / ("baton_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// `count` bytes of `value`, least significant first.
inline std::string little_endian(uint64_t value, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  return out;
}

// A safetensors file as the format defines it: the header length (8 bytes, little-endian), the
// header text as given (no padding added), then `data`.
inline std::string safetensors_bytes(const std::string& header, const std::string& data) {
  return little_endian(header.size(), 8) + header + data;
}

}  // namespace baton::testing
