// Emulated GPU: the reference GEMM loop (gemm_reference.h).
#include "gemm_reference.h"

#include <cmath>
#include <cstring>

namespace baton_emu {

float round_to_tf32(float value) {
  if (!std::isfinite(value)) return value;
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  // 23 - 10 = 13 mantissa bits are dropped: add half of the last kept bit's weight, then truncate.
  bits += 1u << 12;
  bits &= ~((1u << 13) - 1u);
  float rounded = 0;
  std::memcpy(&rounded, &bits, sizeof rounded);
  return rounded;
}

namespace {

template <typename T>
double element(const T* data, int ld, int row, int col, bool transpose, bool tf32) {
  const T value = transpose ? data[static_cast<int64_t>(col) + static_cast<int64_t>(row) * ld]
                            : data[static_cast<int64_t>(row) + static_cast<int64_t>(col) * ld];
  if constexpr (sizeof(T) == sizeof(float)) {
    if (tf32) return round_to_tf32(value);
  }
  return static_cast<double>(value);
}

}  // namespace

template <typename T>
void gemm_reference(const GemmShape& s, double alpha, const T* a, const T* b, double beta, T* c, bool tf32_inputs) {
  for (int j = 0; j < s.n; ++j) {
    for (int i = 0; i < s.m; ++i) {
      double sum = 0;
      for (int l = 0; l < s.k; ++l) {
        sum +=
            element(a, s.lda, i, l, s.transpose_a, tf32_inputs) * element(b, s.ldb, l, j, s.transpose_b, tf32_inputs);
      }
      T& out = c[static_cast<int64_t>(i) + static_cast<int64_t>(j) * s.ldc];
      const double prior = beta == 0 ? 0.0 : beta * static_cast<double>(out);
      out = static_cast<T>(alpha * sum + prior);
    }
  }
}

template void gemm_reference<float>(const GemmShape&, double, const float*, const float*, double, float*, bool);
template void gemm_reference<double>(const GemmShape&, double, const double*, const double*, double, double*, bool);

}  // namespace baton_emu
