// Measured normalisation: the per-channel mean and standard deviation of pixel / 255 over a dataset,
// which loaders subtract and divide by (docs/data.md, "Normalisation").
#pragma once

#include <cstdint>

#include "runtime/data/sample_transform.h"

namespace baton::data {

class Dataset;

// Images measure_normalization reads at most: enough for three decimals on every dataset we ship.
inline constexpr int64_t kNormalizationSamples = 1000;

// The mean and (population) standard deviation of pixel / 255 per channel, over `max_samples`
// images spread evenly over the dataset (all of them when it has fewer). A channel whose deviation
// is below 1/255 (constant) gets 1: it is centred, not scaled. An empty dataset is an error.
Normalization measure_normalization(const Dataset& dataset, int64_t max_samples = kNormalizationSamples);

}  // namespace baton::data
