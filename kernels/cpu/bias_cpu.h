// CPU reference of the bias family.
#pragma once

#include <cstdint>

#include "kernels/cpu/scalar.h"

namespace baton::kernels::cpu {

// out[n, c, i] += bias[c] for out [batch, channels, inner].
template <typename T>
void bias_add(const T* bias, int64_t batch, int64_t channels, int64_t inner, T* out) {
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      const Acc<T> v = load(bias[c]);
      T* row = out + (b * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) row[i] = store<T>(load(row[i]) + v);
    }
  }
}

}  // namespace baton::kernels::cpu
