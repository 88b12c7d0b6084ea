// Shared by the libFuzzer targets: the input as text, and as a file (for the readers that take a
// path), rewritten for every input in one scratch file per process.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace baton::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// <dir>/<name> holding `size` bytes of `data`; <dir> is one scratch directory per process.
inline std::string as_file(const uint8_t* data, size_t size, const std::string& name) {
  static const std::string dir = [] {
    char pattern[] = "/tmp/baton-fuzz-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) std::abort();
    return std::string(pattern);
  }();
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return dir;
}

}  // namespace baton::fuzz
