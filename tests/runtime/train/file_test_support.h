// File helpers for the safetensors and checkpoint tests: the scratch directory and whole-file
// helpers (tests/support/scratch_dir.h), and a safetensors file assembled byte by byte from header
// text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/scratch_dir.h"

namespace baton::testing {

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
