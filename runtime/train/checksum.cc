// Checksum64: 8-byte words through XXH64's round, the trailing bytes one by one, then its avalanche.
#include "runtime/train/checksum.h"

#include <bit>
#include <cstring>

namespace baton {
namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kPrime5 = 0x27D4EB2F165667C5ull;

}  // namespace

void Checksum64::mix_word(uint64_t word) {
  state_ ^= std::rotl(word * kPrime2, 31) * kPrime1;
  state_ = std::rotl(state_, 27) * kPrime1 + kPrime4;
}

void Checksum64::update(const void* data, size_t count) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  length_ += count;
  while (pending_count_ > 0 && pending_count_ < 8 && count > 0) {
    pending_[pending_count_++] = *bytes++;
    --count;
  }
  if (pending_count_ == 8) {
    uint64_t word = 0;
    std::memcpy(&word, pending_, 8);
    mix_word(word);
    pending_count_ = 0;
  }
  for (; count >= 8; count -= 8, bytes += 8) {
    uint64_t word = 0;
    std::memcpy(&word, bytes, 8);
    mix_word(word);
  }
  std::memcpy(pending_ + pending_count_, bytes, count);
  pending_count_ += count;
}

uint64_t Checksum64::digest() const {
  uint64_t h = state_;
  for (size_t i = 0; i < pending_count_; ++i) {
    h ^= pending_[i] * kPrime5;
    h = std::rotl(h, 11) * kPrime1;
  }
  h += length_;
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

std::string Checksum64::hex() const { return checksum_hex(digest()); }

std::string checksum_hex(uint64_t digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, digest >>= 4) out[static_cast<size_t>(i)] = kDigits[digest & 0xf];
  return out;
}

}  // namespace baton
