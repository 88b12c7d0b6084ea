// shuffled_order: Fisher-Yates with unbiased draws from one Philox stream.
#include "runtime/data/epoch_order.h"

#include <numeric>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/data/random_streams.h"

namespace baton::data {

std::vector<int64_t> shuffled_order(int64_t size, uint64_t seed, int64_t epoch) {
  BATON_CHECK(size >= 0 && size <= int64_t{UINT32_MAX}, "cannot shuffle ", size, " samples: expected 0 .. ",
              UINT32_MAX);
  std::vector<int64_t> order(static_cast<size_t>(size));
  std::iota(order.begin(), order.end(), int64_t{0});
  RandomDraws draws(derive_seed(seed, RandomPurpose::shuffle, static_cast<uint64_t>(epoch)));
  for (int64_t i = size - 1; i > 0; --i) {
    const int64_t j = draws.below(static_cast<uint32_t>(i + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace baton::data
