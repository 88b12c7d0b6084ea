// CPU reference for the random fills (kernels/random.h): element i from stream index offset + i.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/cpu/scalar.h"
#include "kernels/random_math.h"

namespace baton::kernels::cpu {

// out[i] = the value of `distribution` (parameters a, b) at stream index offset + i.
template <typename T>
void random_fill(Distribution distribution, T* out, int64_t n, uint64_t seed, uint64_t offset, double a, double b) {
  constexpr bool wide = std::is_same_v<T, double>;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t index = offset + static_cast<uint64_t>(i);
    out[i] = store_double<T>(distribution == Distribution::uniform
                                 ? uniform_value(philox::uint32_at(seed, index), wide, a, b)
                                 : normal_value(seed, index, a, b));
  }
}

}  // namespace baton::kernels::cpu
