// The per-element optimizer updates shared by the CPU reference and the CUDA kernels, and their
// preparation from the public parameters (scalars combined in double, then converted to the
// arithmetic type A: float for f32, double for f64).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/optimizer_types.h"
#include "runtime/core/host_device.h"

namespace baton::kernels {

template <typename A>
BATON_HOST_DEVICE A sqrt_of(A x) {
#if defined(__CUDA_ARCH__)
  return sqrt(x);  // IEEE round-to-nearest in float and double, as the host's
#else
  return std::sqrt(x);
#endif
}

// Buffer order of the fused updates: params, grads, then the optimizer state. Every buffer but the
// gradient is written back.
inline constexpr int kGradBuffer = 1;

// SGD: v = {param, grad, momentum buffer (read and written only when has_momentum)}.
template <typename A>
struct SgdUpdate {
  static constexpr int kSlots = 3;  // the size of v (a step without momentum has two buffers)
  A lr, momentum, keep_grad /* 1 - dampening */, weight_decay, decay /* 1 - lr * weight_decay */;
  bool has_momentum, nesterov, decoupled, first_step;

  BATON_HOST_DEVICE void operator()(A* v) const {
    apply(v, weight_decay != A(0), decoupled, has_momentum, nesterov, first_step);
  }

  // The update with its flags given as bools or as std::bool_constant: the CPU passes constants, so
  // that each combination is a loop without branches, which vectorises (kernels/cpu/optimizer_cpu.h).
  template <typename Decay, typename Decoupled, typename Momentum, typename Nesterov, typename First>
  BATON_HOST_DEVICE void apply(A* v, Decay with_decay, Decoupled decoupled_decay, Momentum with_momentum,
                               Nesterov with_nesterov, First at_first_step) const {
    A g = v[1];
    if (with_decay) {
      if (decoupled_decay) {
        v[0] = v[0] * decay;
      } else {
        g = g + weight_decay * v[0];
      }
    }
    if (with_momentum) {
      const A buf = at_first_step ? g : momentum * v[2] + keep_grad * g;
      v[2] = buf;
      g = with_nesterov ? g + momentum * buf : buf;
    }
    v[0] = v[0] - lr * g;
  }
};

template <typename A>
SgdUpdate<A> make_sgd_update(const SgdParams& p) {
  return SgdUpdate<A>{static_cast<A>(p.lr),
                      static_cast<A>(p.momentum),
                      static_cast<A>(1.0 - p.dampening),
                      static_cast<A>(p.weight_decay),
                      static_cast<A>(1.0 - p.lr * p.weight_decay),
                      p.momentum != 0.0,
                      p.nesterov,
                      p.decoupled_weight_decay,
                      p.first_step};
}

// AdamW: v = {param, grad, exp_avg, exp_avg_sq}.
template <typename A>
struct AdamWUpdate {
  static constexpr int kSlots = 4;
  A decay /* 1 - lr * weight_decay */, beta1, keep_grad1 /* 1 - beta1 */, beta2, keep_grad2 /* 1 - beta2 */;
  A step_size /* lr / (1 - beta1^step) */, correction2_sqrt /* sqrt(1 - beta2^step) */, eps;

  BATON_HOST_DEVICE void operator()(A* v) const {
    const A g = v[1];
    const A m = beta1 * v[2] + keep_grad1 * g;
    const A s = beta2 * v[3] + keep_grad2 * g * g;
    v[2] = m;
    v[3] = s;
    const A denominator = sqrt_of(s) / correction2_sqrt + eps;
    v[0] = v[0] * decay - step_size * (m / denominator);
  }
};

template <typename A>
AdamWUpdate<A> make_adamw_update(const AdamWParams& p) {
  const double steps = static_cast<double>(p.step);
  return AdamWUpdate<A>{static_cast<A>(1.0 - p.lr * p.weight_decay),
                        static_cast<A>(p.beta1),
                        static_cast<A>(1.0 - p.beta1),
                        static_cast<A>(p.beta2),
                        static_cast<A>(1.0 - p.beta2),
                        static_cast<A>(p.lr / (1.0 - std::pow(p.beta1, steps))),
                        static_cast<A>(std::sqrt(1.0 - std::pow(p.beta2, steps))),
                        static_cast<A>(p.eps)};
}

}  // namespace baton::kernels
