// Keyed Philox streams for datasets and the loader: every consumer (a generated image, an epoch's
// shuffle, a sample's augmentation) draws from its own stream, derived from (seed, purpose, value),
// so results depend only on those keys, never on threads, timing or the machine.
#pragma once

#include <cstdint>

#include "runtime/core/philox.h"

namespace baton::data {

// What a derived stream is for; distinct purposes never share a stream.
enum class RandomPurpose : uint32_t {
  shapes_train = 1,
  shapes_test = 2,
  synthetic_train = 3,
  synthetic_test = 4,
  shuffle = 5,
  augmentation = 6,
  tokens_train = 7,
  tokens_test = 8,
};

// The seed of the stream for (seed, purpose, value): one Philox block keyed by `seed`.
inline uint64_t derive_seed(uint64_t seed, RandomPurpose purpose, uint64_t value) {
  constexpr uint32_t kDomain = 0x62746e64u;  // separates these streams from plain block_at(seed, n)
  const philox::Block b =
      philox::generate(philox::Block{{static_cast<uint32_t>(value), static_cast<uint32_t>(value >> 32),
                                      static_cast<uint32_t>(purpose), kDomain}},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  return static_cast<uint64_t>(b.v[0]) | (static_cast<uint64_t>(b.v[1]) << 32);
}

// Consecutive 32-bit draws from the stream `seed` (element 0, 1, 2, ...).
class RandomDraws {
 public:
  explicit RandomDraws(uint64_t seed) : seed_(seed) {}

  uint32_t next() {
    if (lane_ == 4) {
      block_ = philox::block_at(seed_, block_index_++);
      lane_ = 0;
    }
    return block_.v[lane_++];
  }

  // Uniform in [0, bound) without bias (Lemire's multiply-and-reject); bound must be positive.
  uint32_t below(uint32_t bound) {
    uint64_t product = static_cast<uint64_t>(next()) * bound;
    if (static_cast<uint32_t>(product) < bound) {
      const uint32_t threshold = (0u - bound) % bound;
      while (static_cast<uint32_t>(product) < threshold) product = static_cast<uint64_t>(next()) * bound;
    }
    return static_cast<uint32_t>(product >> 32);
  }

 private:
  uint64_t seed_;
  uint64_t block_index_ = 0;
  philox::Block block_{};
  unsigned lane_ = 4;
};

// `bits` scaled to [0, bound): the top of bits * bound (a bias below bound / 2^32; for cheap draws
// such as crop offsets and labels where exact uniformity does not matter).
inline uint32_t scale_below(uint32_t bits, uint32_t bound) {
  return static_cast<uint32_t>((static_cast<uint64_t>(bits) * bound) >> 32);
}

}  // namespace baton::data
