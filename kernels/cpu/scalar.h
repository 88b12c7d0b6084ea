// CPU reference helpers: the accumulation type of each element type and conversions to and from it.
#pragma once

#include "kernels/acc_type.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cpu {

// Arithmetic happens in Acc<T>: float for f32, f16 and bf16; double for f64.
template <typename T>
using Acc = AccType<T, Half, BFloat16>;

template <typename T>
inline Acc<T> load(T v) {
  return v;
}
inline float load(Half v) { return half_to_float(v); }
inline float load(BFloat16 v) { return bfloat16_to_float(v); }

template <typename T>
inline T store(Acc<T> v) {
  return static_cast<T>(v);
}
template <>
inline Half store<Half>(float v) {
  return float_to_half(v);
}
template <>
inline BFloat16 store<BFloat16>(float v) {
  return float_to_bfloat16(v);
}

// Stores a value computed in double as T, through Acc<T> (f16 and bf16 through float, as on CUDA):
// exact for maxima, one more rounding for sums.
template <typename T>
inline T store_double(double v) {
  return store<T>(static_cast<Acc<T>>(v));
}

}  // namespace baton::kernels::cpu
