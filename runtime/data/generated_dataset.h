// Generated datasets: the per-sample random streams of a split, and the base their datasets share.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "runtime/data/dataset.h"
#include "runtime/data/random_streams.h"

namespace baton::data {

// Sample i of the split draws from the stream (seed, the split's purpose, i): each split has
// streams of its own, and a sample's draws depend only on those keys.
class SampleStreams {
 public:
  SampleStreams(Split split, uint64_t seed, RandomPurpose train_purpose, RandomPurpose test_purpose)
      : split_(split), seed_(seed), purpose_(split == Split::train ? train_purpose : test_purpose) {}

  // The seed of sample `index`'s stream.
  uint64_t of(int64_t index) const { return derive_seed(seed_, purpose_, static_cast<uint64_t>(index)); }

  // " (train, seed 42)": the split and seed, as a dataset's name ends.
  std::string name_suffix() const {
    return std::string(" (") + split_name(split_) + ", seed " + std::to_string(seed_) + ")";
  }

 private:
  Split split_;
  uint64_t seed_;
  RandomPurpose purpose_;
};

// A dataset generated from its Options (`samples` in each split) and the split's sample streams.
template <typename Options>
class GeneratedDataset : public Dataset {
 public:
  int64_t size() const override { return options_.samples; }

 protected:
  GeneratedDataset(Options options, SampleStreams streams) : options_(std::move(options)), streams_(streams) {}

  Options options_;
  SampleStreams streams_;
};

}  // namespace baton::data
