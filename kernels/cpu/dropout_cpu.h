// CPU reference of the dropout ops (kernels/dropout.h): one Philox block per four elements.
#pragma once

#include <cstdint>

#include "kernels/cpu/scalar.h"
#include "kernels/dropout_math.h"
#include "runtime/core/philox.h"

namespace baton::kernels::cpu {

// out[i] = in[i] · scale where element i is kept, else +0. `in` may be `out`.
template <typename T>
void dropout(const T* in, uint32_t threshold, double scale, uint64_t seed, T* out, int64_t n) {
  const auto s = static_cast<Acc<T>>(scale);
  for (int64_t base = 0; base < n; base += kDropoutLanes) {
    const philox::Block bits = philox::block_at(seed, static_cast<uint64_t>(base / kDropoutLanes));
    for (int64_t i = base; i < n && i < base + kDropoutLanes; ++i) {
      out[i] = store<T>(dropout_value(load(in[i]), dropout_keeps(bits.v[i - base], threshold), s));
    }
  }
}

}  // namespace baton::kernels::cpu
