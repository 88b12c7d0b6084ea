// CPU reference helpers: the accumulation type of each element type and conversions to and from it.
#pragma once

#include "runtime/core/dtype.h"

namespace baton::kernels::cpu {

// Arithmetic happens in Acc<T>: float for f32, f16 and bf16; double for f64.
template <typename T>
struct AccOf {
  using type = T;
};
template <>
struct AccOf<Half> {
  using type = float;
};
template <>
struct AccOf<BFloat16> {
  using type = float;
};
template <typename T>
using Acc = typename AccOf<T>::type;

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

}  // namespace baton::kernels::cpu
