// The order in which one epoch visits a dataset: a Fisher-Yates shuffle driven by the Philox
// stream keyed by (seed, epoch), identical on every machine.
#pragma once

#include <cstdint>
#include <vector>

namespace baton::data {

// A permutation of 0 .. size-1 (size < 2^32).
std::vector<int64_t> shuffled_order(int64_t size, uint64_t seed, int64_t epoch);

}  // namespace baton::data
