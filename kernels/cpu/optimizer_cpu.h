// CPU reference for the optimizer ops (kernels/optimizer.h): one pass over the flat buffers applying
// the shared per-element update (kernels/optimizer_math.h).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/cpu/parallel.h"
#include "kernels/optimizer_math.h"

namespace baton::kernels::cpu {

// buffers[b][i] for b < kBuffers <= Update::kSlots: {params, grads, state...}; every buffer but the
// gradient is written back.
template <typename T, int kBuffers, typename Update>
void fused_update(T* const (&buffers)[kBuffers], int64_t n, const Update& update) {
  static_assert(kBuffers <= Update::kSlots);
  pointwise_for(n, [&](int64_t i) {
    T v[Update::kSlots] = {};
    for (int b = 0; b < kBuffers; ++b) v[b] = buffers[b][i];
    update(v);
    for (int b = 0; b < kBuffers; ++b) {
      if (b != kGradBuffer) buffers[b][i] = v[b];
    }
  });
}

// fn(std::true_type) or fn(std::false_type), as flag says.
template <typename Fn>
void with_constant(bool flag, const Fn& fn) {
  if (flag) {
    fn(std::true_type{});
  } else {
    fn(std::false_type{});
  }
}

// An update of kSlots slots made of a callable.
template <int kSlotCount, typename Fn>
struct SlotUpdate {
  static constexpr int kSlots = kSlotCount;
  Fn fn;
  template <typename A>
  void operator()(A* v) const {
    fn(v);
  }
};

// SGD over {params, grads} or {params, grads, momentum} (momentum when kBuffers is 3), with the
// update's flags made compile-time constants: one branch-free, vectorised loop per combination
// instead of five tests per element. The same arithmetic as update(v), so the same bits.
template <typename T, int kBuffers>
void sgd_update(T* const (&buffers)[kBuffers], int64_t n, const SgdUpdate<T>& update) {
  using Momentum = std::bool_constant<kBuffers == 3>;
  constexpr bool kMomentum = Momentum::value;
  with_constant(update.weight_decay != T(0), [&](auto decay) {
    with_constant(update.decoupled, [&](auto decoupled) {
      with_constant(kMomentum && update.nesterov, [&](auto nesterov) {
        with_constant(kMomentum && update.first_step, [&](auto first) {
          const auto step = [&update, decay, decoupled, nesterov, first](T* v) {
            update.apply(v, decay, decoupled, Momentum{}, nesterov, first);
          };
          fused_update(buffers, n, SlotUpdate<SgdUpdate<T>::kSlots, decltype(step)>{step});
        });
      });
    });
  });
}

}  // namespace baton::kernels::cpu
