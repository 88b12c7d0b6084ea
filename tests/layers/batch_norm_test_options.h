// The BatchNorm2d options of the batch-norm layer tests: eps 1e-3 and momentum 0.2 (far from the
// defaults, so a constant in the wrong place shows) with the flags given, and the walk over every
// combination of the flags in both modes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "layers/batch_norm.h"
#include "runtime/core/shape.h"
#include "runtime/graph/layer.h"

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

// Calls fn(affine, track, freeze, mode) for every combination of the flags (freezing needs tracked
// statistics) in train and eval mode, each under a SCOPED_TRACE naming `shape` and them.
template <typename Fn>
void for_each_option_and_mode(const Shape& shape, const Fn& fn) {
  for (bool affine : {true, false}) {
    for (bool track : {true, false}) {
      for (bool freeze : {false, true}) {
        if (freeze && !track) continue;
        for (Mode mode : {Mode::train, Mode::eval}) {
          SCOPED_TRACE(shape.str() + (affine ? " affine" : "") + (track ? " track" : "") + (freeze ? " freeze" : "") +
                       (mode == Mode::train ? " train" : " eval"));
          fn(affine, track, freeze, mode);
        }
      }
    }
  }
}

}  // namespace baton::layers::batch_norm_test
