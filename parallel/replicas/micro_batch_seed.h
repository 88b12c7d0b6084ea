// The random seed of one micro-batch (or data-parallel replica) of a training step.
#pragma once

#include <cstdint>

namespace baton::parallel {

// The seed of micro-batch m of a step: seed + m x 0x9E3779B97F4A7C15 (m = 0: the step's seed, so
// one micro-batch draws exactly what the single-device executor draws with the step's seed).
inline uint64_t micro_batch_seed(uint64_t step_seed, int micro_batch) {
  return step_seed + static_cast<uint64_t>(micro_batch) * 0x9E3779B97F4A7C15ull;
}

}  // namespace baton::parallel
