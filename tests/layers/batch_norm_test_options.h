// The BatchNorm2d options of the CPU batch-norm layer tests: eps 1e-3 and momentum 0.2 (far from
// the defaults, so a constant in the wrong place shows), and the flags given.
#pragma once

#include <cstdint>

#include "layers/batch_norm.h"

namespace baton::layers::batch_norm_test {

inline constexpr double kEps = 1e-3;
inline constexpr double kMomentum = 0.2;

inline BatchNorm2dOptions options(int64_t channels, bool affine = true, bool track = true, bool freeze = false) {
  return {.num_features = channels,
          .eps = kEps,
          .momentum = kMomentum,
          .affine = affine,
          .track_running_stats = track,
          .freeze_statistics = freeze};
}

}  // namespace baton::layers::batch_norm_test
