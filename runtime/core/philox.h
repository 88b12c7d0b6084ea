// Counter-based Philox 4x32-10 (Salmon et al., SC'11), the same bits on host and device.
// Element i of the stream (seed, offset) comes from block (offset + i) / 4, lane (offset + i) % 4,
// so a consecutive fill with offset += numel continues the same sequence on any device.
#pragma once

#include <cmath>
#include <cstdint>

#include "runtime/core/host_device.h"

namespace baton::philox {

struct Block {
  uint32_t v[4];
};

BATON_HOST_DEVICE void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t product = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}

// The raw generator: 10 rounds over a 128-bit counter with a 64-bit key.
BATON_HOST_DEVICE Block generate(Block counter, uint32_t key0, uint32_t key1) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t c0 = counter.v[0], c1 = counter.v[1], c2 = counter.v[2], c3 = counter.v[3];
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, c0, hi0, lo0);
    mulhilo(kMul1, c2, hi1, lo1);
    const uint32_t n0 = hi1 ^ c1 ^ key0, n2 = hi0 ^ c3 ^ key1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return Block{{c0, c1, c2, c3}};
}

// Block number `block` of the stream keyed by `seed` (counter words 2-3 are zero).
BATON_HOST_DEVICE Block block_at(uint64_t seed, uint64_t block) {
  return generate(Block{{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0u, 0u}},
                  static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Element `index` of the stream keyed by `seed`.
BATON_HOST_DEVICE uint32_t uint32_at(uint64_t seed, uint64_t index) { return block_at(seed, index >> 2).v[index & 3u]; }

// A uniform float in [0, 1) with 24 random bits (exactly representable, identical everywhere).
BATON_HOST_DEVICE float to_uniform_float(uint32_t bits) { return static_cast<float>(bits >> 8) * 0x1.0p-24f; }

// A uniform double in [0, 1) with 32 random bits.
BATON_HOST_DEVICE double to_uniform_double(uint32_t bits) { return static_cast<double>(bits) * 0x1.0p-32; }

// Standard normal for element `index`: Box-Muller in double over the lane pair (0,1) or (2,3) of
// the element's block; lanes 0 and 2 take the cosine, 1 and 3 the sine. Computed in double so the
// float results agree on host and device (they can differ by one float ulp in rare cases where
// the libraries' last-bit double results straddle a float rounding boundary).
BATON_HOST_DEVICE double normal_at(uint64_t seed, uint64_t index) {
  const Block b = block_at(seed, index >> 2);
  const unsigned lane = static_cast<unsigned>(index & 3u);
  const unsigned first = lane & 2u;
  const double u1 = (static_cast<double>(b.v[first]) + 1.0) * 0x1.0p-32;  // (0, 1]: log is finite
  const double u2 = static_cast<double>(b.v[first + 1]) * 0x1.0p-32;
  const double radius = sqrt(-2.0 * log(u1));
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return (lane & 1u) ? radius * sin(kTwoPi * u2) : radius * cos(kTwoPi * u2);
}

}  // namespace baton::philox
