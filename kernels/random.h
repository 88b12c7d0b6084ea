// Random fills from counter-based Philox (runtime/core/philox.h): element i of `out` takes stream
// index offset + i of the stream keyed by `seed`, so the numbers do not depend on the device, the
// launch shape or how a fill is split (a fill of n at offset 0 followed by a fill of n at offset n
// equals one fill of 2n). Continue a sequence by advancing offset by numel. offset + numel must not
// exceed 2^64.
//
// out: f32, f64, f16 or bf16, any shape. Values are computed in double from the uniform / normal
// number and rounded once to f32 or f64 (f16 and bf16: to float, then to the 16-bit type).
// Uniform numbers use 24 random bits (philox::to_uniform_float) for f32, f16 and bf16 and 32 random
// bits (philox::to_uniform_double) for f64; CPU and CUDA write identical bits. Normal numbers use
// philox::normal_at (Box-Muller in double); CPU and CUDA agree to one ulp of the output dtype (the
// host's and the device's log / sin / cos may differ in the last bit of a double).
#pragma once

#include <cstdint>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// out = low + (high - low) * u with u uniform in [0, 1), low <= high (both finite). Rounding to the
// output dtype can give exactly `high` when the range is wide relative to the dtype's precision.
void uniform(Context& ctx, const Tensor& out, uint64_t seed, uint64_t offset, double low = 0, double high = 1);

// out = mean + stddev * z with z standard normal, stddev >= 0 (both finite).
void normal(Context& ctx, const Tensor& out, uint64_t seed, uint64_t offset, double mean = 0, double stddev = 1);

}  // namespace baton::kernels
