// Shared by the CPU pooling tests: a geometry from its five fields, and the outputs and input
// gradient an average-pooling reference computes.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/pool.h"

namespace baton::kernels::pool_test {

inline Pool2dGeometry geometry(std::array<int64_t, 2> k, std::array<int64_t, 2> s, std::array<int64_t, 2> p,
                               std::array<int64_t, 2> d, bool ceil_mode) {
  return Pool2dGeometry{k, s, p, d, ceil_mode};
}

struct AvgReference {
  std::vector<double> y, dx;
};

}  // namespace baton::kernels::pool_test
