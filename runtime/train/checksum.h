// Checksum64: a small streaming 64-bit hash (XXH64's round and avalanche on one lane), cheap
// enough to run over every byte a checkpoint writes or loads; it detects corruption, not forgery.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace baton {

class Checksum64 {
 public:
  // Adds `count` bytes; the digest depends only on the bytes, not on how they were split.
  void update(const void* data, size_t count);
  void update(std::string_view text) { update(text.data(), text.size()); }
  uint64_t digest() const;
  // The digest as 16 lowercase hexadecimal digits.
  std::string hex() const;

 private:
  void mix_word(uint64_t word);

  uint64_t state_ = 0x27D4EB2F165667C5ull;
  uint64_t length_ = 0;
  unsigned char pending_[8] = {};
  size_t pending_count_ = 0;
};

// A digest's 16 hexadecimal digits.
std::string checksum_hex(uint64_t digest);

}  // namespace baton
