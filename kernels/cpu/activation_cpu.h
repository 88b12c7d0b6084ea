// CPU reference of the activation ops (kernels/activation.h): plain loops over n elements with the
// formulas of kernels/activation_math.h, arithmetic in Acc<T>. An output may be the same array as an
// input (element i is read before it is written).
#pragma once

#include <cstdint>

#include "kernels/activation_math.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scalar.h"

namespace baton::kernels::cpu {

// out[i] = f(load(x[i])) rounded to T.
template <typename T, typename F>
void map_unary(const T* x, T* out, int64_t n, F f) {
  pointwise_for(n, [&](int64_t i) { out[i] = store<T>(f(load(x[i]))); });
}

// dx[i] = f(load(saved[i]), load(dy[i])) rounded to T.
template <typename T, typename F>
void map_backward(const T* saved, const T* dy, T* dx, int64_t n, F f) {
  pointwise_for(n, [&](int64_t i) { dx[i] = store<T>(f(load(saved[i]), load(dy[i]))); });
}

template <typename T>
void activation_forward(Activation activation, const T* x, T* out, int64_t n) {
  switch (activation) {
    case Activation::relu6:
      return map_unary(x, out, n, [](Acc<T> v) { return relu6_value(v); });
    case Activation::sigmoid:
      return map_unary(x, out, n, [](Acc<T> v) { return sigmoid_value(v); });
    case Activation::tanh:
      return map_unary(x, out, n, [](Acc<T> v) { return tanh_of(v); });
  }
}

// relu6: dy (bit for bit) where 0 < x < 6, else +0. sigmoid and tanh from the output y.
template <typename T>
void activation_backward(Activation activation, const T* saved, const T* dy, T* dx, int64_t n) {
  switch (activation) {
    case Activation::relu6:
      pointwise_for(n, [&](int64_t i) {  // dy read unconditionally, as relu_backward: a select, not a branch
        const T g = dy[i];
        dx[i] = relu6_passes(load(saved[i])) ? g : store<T>(0);
      });
      return;
    case Activation::sigmoid:
      return map_backward(saved, dy, dx, n, [](Acc<T> y, Acc<T> g) { return sigmoid_grad(y, g); });
    case Activation::tanh:
      return map_backward(saved, dy, dx, n, [](Acc<T> y, Acc<T> g) { return tanh_grad(y, g); });
  }
}

// out = factor · x with factor = alpha · scalar rounded once to Acc<T>.
template <typename T, typename S>
void scale_by_scalar(const T* x, const S* scalar, double alpha, T* out, int64_t n) {
  const auto factor = static_cast<Acc<T>>(alpha * static_cast<double>(*scalar));
  map_unary(x, out, n, [factor](Acc<T> v) { return factor * v; });
}

}  // namespace baton::kernels::cpu
