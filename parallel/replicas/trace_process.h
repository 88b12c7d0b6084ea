// The trace process of measured timelines (pipeline positions, data-parallel replicas).
#pragma once

namespace baton::parallel {

inline constexpr int kMeasuredProcess = 1;

}  // namespace baton::parallel
