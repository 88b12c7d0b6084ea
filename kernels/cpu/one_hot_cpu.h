// CPU reference of one_hot.
#pragma once

#include <cstdint>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scalar.h"

namespace baton::kernels::cpu {

// out[r, c] = (indices[r] == c) for `rows` indices, each in [0, classes).
template <typename T, typename I>
void one_hot(const I* indices, int64_t rows, int64_t classes, T* out) {
  rows_for(rows, classes, [&](int64_t r) {
    T* row = out + r * classes;
    for (int64_t c = 0; c < classes; ++c) row[c] = store_double<T>(0.0);
    row[indices[r]] = store_double<T>(1.0);
  });
}

}  // namespace baton::kernels::cpu
