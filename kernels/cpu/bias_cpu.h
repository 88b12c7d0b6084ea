// CPU reference of the bias family.
#pragma once

#include <cstdint>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scalar.h"

namespace baton::kernels::cpu {

// out[n, c, i] += bias[c] for out [batch, channels, inner].
template <typename T>
void bias_add(const T* bias, int64_t batch, int64_t channels, int64_t inner, T* out) {
  rows_for(batch * channels, inner, [&](int64_t r) {
    const Acc<T> v = load(bias[r % channels]);
    T* row = out + r * inner;
    for (int64_t i = 0; i < inner; ++i) row[i] = store<T>(load(row[i]) + v);
  });
}

}  // namespace baton::kernels::cpu
