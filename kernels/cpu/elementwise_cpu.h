// CPU reference of the elementwise family: plain loops over n elements, arithmetic in Acc<T>.
// An output may be the same array as an input (in place): element i is read before it is written.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scalar.h"

namespace baton::kernels::cpu {

template <typename T>
void add(const T* a, const T* b, T* out, int64_t n) {
  pointwise_for(n, [&](int64_t i) { out[i] = store<T>(load(a[i]) + load(b[i])); });
}

template <typename T>
void sub(const T* a, const T* b, T* out, int64_t n) {
  pointwise_for(n, [&](int64_t i) { out[i] = store<T>(load(a[i]) - load(b[i])); });
}

template <typename T>
void mul(const T* a, const T* b, T* out, int64_t n) {
  pointwise_for(n, [&](int64_t i) { out[i] = store<T>(load(a[i]) * load(b[i])); });
}

template <typename T>
void scale(const T* x, double alpha, T* out, int64_t n) {
  const auto a = static_cast<Acc<T>>(alpha);
  pointwise_for(n, [&](int64_t i) { out[i] = store<T>(a * load(x[i])); });
}

// out = alpha·x + beta·y; axpy is axpby with beta = 1 and out = y (1·y is exact).
template <typename T>
void axpby(double alpha, const T* x, double beta, const T* y, T* out, int64_t n) {
  const auto a = static_cast<Acc<T>>(alpha), b = static_cast<Acc<T>>(beta);
  pointwise_for(n, [&](int64_t i) { out[i] = store<T>(a * load(x[i]) + b * load(y[i])); });
}

// x where x > 0 or x is NaN (bit for bit), else +0.
template <typename T>
void relu_forward(const T* x, T* out, int64_t n) {
  pointwise_for(n, [&](int64_t i) {
    const Acc<T> v = load(x[i]);
    out[i] = !(v <= 0) ? x[i] : store<T>(0);  // true for NaN: one comparison, which vectorises
  });
}

// dy (bit for bit) where y > 0, else +0. dy[i] is read unconditionally: a read inside the condition
// is a branch the compiler may not turn into a select, and on activations whose signs look random
// it mispredicted half the time (ResNet-20 backward spent a quarter of its time here).
template <typename T>
void relu_backward(const T* y, const T* dy, T* dx, int64_t n) {
  pointwise_for(n, [&](int64_t i) {
    const T g = dy[i];
    dx[i] = load(y[i]) > 0 ? g : store<T>(0);
  });
}

// f64 -> f32 rounding to odd: exact values unchanged, others the neighbour with an odd last
// mantissa bit. Rounding that float once more to a format at least 2 bits narrower (f16: 11 bits,
// bf16: 8, against 24) gives the correctly rounded result, which f64 -> f32 -> f16 with round to
// nearest twice does not (1 + 2^-11 + 2^-40 would become 1). CUDA computes the same float from
// __double2float_rz.
inline float double_to_float_round_odd(double v) {
  float f = static_cast<float>(v);  // nearest even
  if (std::isnan(v) || static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);  // truncate toward zero
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

// One element of S converted to D, rounding to nearest even once.
template <typename D, typename S>
D convert(S v) {
  if constexpr (std::is_same_v<D, double>) {
    return static_cast<double>(load(v));  // exact
  } else if constexpr (std::is_same_v<S, double>) {
    if constexpr (std::is_same_v<D, float>)
      return static_cast<float>(v);
    else
      return store<D>(double_to_float_round_odd(v));
  } else {
    return store<D>(static_cast<float>(load(v)));  // f16/bf16 -> float is exact
  }
}

template <typename S, typename D>
void cast(const S* src, D* out, int64_t n) {
  pointwise_for(n, [&](int64_t i) { out[i] = convert<D>(src[i]); });
}

}  // namespace baton::kernels::cpu
