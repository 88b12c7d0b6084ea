// The value formulas of the random fills, shared by the CPU reference and the CUDA kernels. The
// affine map is one fused multiply-add (correctly rounded on both sides, so the bits agree).
#pragma once

#include <cmath>
#include <cstdint>

#include "runtime/core/host_device.h"
#include "runtime/core/philox.h"

namespace baton::kernels {

// What a fill draws. Its two parameters (a, b) are (low, high - low) for uniform, (mean, stddev) for normal.
enum class Distribution { uniform, normal };

// a + scale * x rounded once.
BATON_HOST_DEVICE double affine(double a, double scale, double x) {
#if defined(__CUDA_ARCH__)
  return fma(scale, x, a);
#else
  return std::fma(scale, x, a);
#endif
}

// low + range * u for the uniform u made from `bits`: 32 random bits when `wide` (f64 outputs),
// else the 24 of philox::to_uniform_float.
BATON_HOST_DEVICE double uniform_value(uint32_t bits, bool wide, double low, double range) {
  const double u = wide ? philox::to_uniform_double(bits) : static_cast<double>(philox::to_uniform_float(bits));
  return affine(low, range, u);
}

// mean + stddev * z for the standard normal z at stream index `index`.
BATON_HOST_DEVICE double normal_value(uint64_t seed, uint64_t index, double mean, double stddev) {
  return affine(mean, stddev, philox::normal_at(seed, index));
}

}  // namespace baton::kernels
