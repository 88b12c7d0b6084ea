// Helpers for the loader tests: small options, a batch's contents on the host, and whole epochs of them.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/data/loader.h"

namespace baton::data::testing {

// `batch_size` samples a batch, seed 17, the given threads.
inline LoaderOptions options(int64_t batch_size, int workers = 2, int prefetch = 2) {
  LoaderOptions o;
  o.batch_size = batch_size;
  o.workers = workers;
  o.prefetch = prefetch;
  o.seed = 17;
  return o;
}

struct SeenBatch {
  int64_t epoch = -1, index = -1;
  std::vector<int64_t> labels;
  std::vector<float> images;
  bool operator==(const SeenBatch& other) const = default;
};

inline SeenBatch seen(const Batch& batch, const Stream& stream) {
  return SeenBatch{batch.epoch, batch.index, batch.targets.to_vector<int64_t>(stream),
                   batch.input("images").to_vector<float>(stream)};
}

// Every batch of the next `epochs` epochs (each ending with next() returning nullopt).
inline std::vector<SeenBatch> run_epochs(DataLoader& loader, int epochs, const Stream& stream) {
  std::vector<SeenBatch> batches;
  for (int e = 0; e < epochs; ++e) {
    while (auto batch = loader.next(stream)) batches.push_back(seen(*batch, stream));
  }
  return batches;
}

}  // namespace baton::data::testing
