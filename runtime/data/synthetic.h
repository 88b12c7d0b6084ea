// "synthetic": random images and labels from Philox, for benchmarks that must not wait on data.
// Spec: synthetic[:CxHxW[:CLASSES[:SAMPLES]]], default synthetic:3x224x224:1000, with 1,000,000 train
// and 10,000 test samples; SAMPLES, when given, is the size of each split.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/data/dataset.h"
#include "runtime/data/generated_dataset.h"

namespace baton::data {

struct SyntheticOptions {
  Shape image_shape{3, 224, 224};
  int64_t classes = 1000;
  int64_t samples = 1000000;     // the train split's
  int64_t test_samples = 10000;  // the test split's (a million would take minutes to evaluate)
};

// Parses "synthetic", "synthetic:3x32x32", "synthetic:3x32x32:10", "synthetic:3x32x32:10:50000".
// Errors name the spec, the part and what was expected.
SyntheticOptions parse_synthetic_spec(const std::string& spec);

class SyntheticDataset : public GeneratedDataset<SyntheticOptions> {
 public:
  SyntheticDataset(SyntheticOptions options, Split split, uint64_t seed);

  Shape image_shape() const override { return options_.image_shape; }
  int64_t num_classes() const override { return options_.classes; }
  // Uniform random bytes and a uniform random label, a function of (seed, split, index).
  void read(int64_t index, uint8_t* pixels, int64_t& label) const override;
  std::string name() const override;
};

}  // namespace baton::data
