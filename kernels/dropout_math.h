// The dropout mask and value, shared by the CPU reference and the CUDA kernel. The test u >= p on
// the 24-bit uniform u = (bits >> 8) · 2^-24 is done on integers: (bits >> 8) >= ceil(p · 2^24),
// which is exact (p · 2^24 only shifts the exponent) and the same on every device.
#pragma once

#include <cmath>
#include <cstdint>

#include "runtime/core/host_device.h"

namespace baton::kernels {

// Philox numbers per block: the unit both implementations draw in.
inline constexpr int kDropoutLanes = 4;

// The smallest kept (bits >> 8) for drop probability p in [0, 1]: ceil(p · 2^24) in [0, 2^24].
inline uint32_t dropout_threshold(double p) { return static_cast<uint32_t>(std::ceil(std::ldexp(p, 24))); }

BATON_HOST_DEVICE bool dropout_keeps(uint32_t bits, uint32_t threshold) { return (bits >> 8) >= threshold; }

// x · scale where kept, else +0 (A: the accumulation type).
template <typename A>
BATON_HOST_DEVICE A dropout_value(A x, bool keep, A scale) {
  return keep ? x * scale : A(0);
}

}  // namespace baton::kernels
