// CPU reference for the optimizer ops (kernels/optimizer.h): one pass over the flat buffers applying
// the shared per-element update (kernels/optimizer_math.h).
#pragma once

#include <cstdint>

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

}  // namespace baton::kernels::cpu
