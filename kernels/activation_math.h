// The per-element formulas of the activation ops, shared by the CPU reference and the CUDA kernels.
// A is the accumulation type (float, or double for f64). The backward formulas are written as
// products of sums, (1 - y)(1 + y) rather than 1 - y·y, so no compiler can contract them into a
// fused multiply-add on one device only: CPU and CUDA give the same bits.
#pragma once

#include <cmath>

#include "runtime/core/host_device.h"

namespace baton::kernels {

// The activations of the family, for dispatch.
enum class Activation { relu6, sigmoid, tanh };

// exp and tanh in float and double: CUDA's expf, exp, tanhf and tanh in device code, std::exp and
// std::tanh on the host.
#if defined(__CUDA_ARCH__)
BATON_HOST_DEVICE float exp_of(float x) { return expf(x); }
BATON_HOST_DEVICE double exp_of(double x) { return exp(x); }
BATON_HOST_DEVICE float tanh_of(float x) { return tanhf(x); }
BATON_HOST_DEVICE double tanh_of(double x) { return tanh(x); }
#else
BATON_HOST_DEVICE float exp_of(float x) { return std::exp(x); }
BATON_HOST_DEVICE double exp_of(double x) { return std::exp(x); }
BATON_HOST_DEVICE float tanh_of(float x) { return std::tanh(x); }
BATON_HOST_DEVICE double tanh_of(double x) { return std::tanh(x); }
#endif

// min(max(x, 0), 6) with NaN kept and -0 made +0.
template <typename A>
BATON_HOST_DEVICE A relu6_value(A x) {
  if (x != x) return x;
  if (x <= A(0)) return A(0);
  return x >= A(6) ? A(6) : x;
}

// Whether the gradient passes ReLU6 at input x: 0 < x < 6 (false for NaN).
template <typename A>
BATON_HOST_DEVICE bool relu6_passes(A x) {
  return x > A(0) && x < A(6);
}

// 1 / (1 + e^-x), through e^x for negative x so that exp never overflows.
template <typename A>
BATON_HOST_DEVICE A sigmoid_value(A x) {
  if (x >= A(0)) return A(1) / (A(1) + exp_of(-x));
  const A e = exp_of(x);
  return e / (A(1) + e);
}

// dy · y(1 - y) for the sigmoid output y.
template <typename A>
BATON_HOST_DEVICE A sigmoid_grad(A y, A dy) {
  return dy * (y * (A(1) - y));
}

// dy · (1 - y²) for the tanh output y.
template <typename A>
BATON_HOST_DEVICE A tanh_grad(A y, A dy) {
  return dy * ((A(1) - y) * (A(1) + y));
}

}  // namespace baton::kernels
