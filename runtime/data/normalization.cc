// Per-channel pixel statistics from a histogram of the byte values of evenly spaced images.
#include "runtime/data/normalization.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/data/dataset.h"

namespace baton::data {

Normalization measure_normalization(const Dataset& dataset, int64_t max_samples) {
  const int64_t size = dataset.size();
  BATON_CHECK(size > 0, dataset.name(), ": no images to measure the normalisation on");
  const Shape shape = dataset.image_shape();
  const auto channels = static_cast<size_t>(shape[0]);
  const int64_t plane = shape[1] * shape[2];
  const int64_t samples = std::clamp<int64_t>(max_samples, 1, size);
  std::vector<std::array<int64_t, 256>> histogram(channels);
  for (auto& h : histogram) h.fill(0);
  std::vector<uint8_t> pixels(static_cast<size_t>(dataset.image_bytes()));
  for (int64_t s = 0; s < samples; ++s) {
    int64_t label = 0;
    dataset.read(s * size / samples, pixels.data(), label);
    for (size_t c = 0; c < channels; ++c) {
      const uint8_t* p = pixels.data() + static_cast<int64_t>(c) * plane;
      for (int64_t i = 0; i < plane; ++i) ++histogram[c][p[i]];
    }
  }
  Normalization result;
  const double count = static_cast<double>(samples * plane);
  for (const auto& h : histogram) {
    double sum = 0;
    for (int v = 0; v < 256; ++v) sum += static_cast<double>(h[static_cast<size_t>(v)]) * (v / 255.0);
    const double mean = sum / count;
    double squares = 0;
    for (int v = 0; v < 256; ++v) {
      const double d = v / 255.0 - mean;
      squares += static_cast<double>(h[static_cast<size_t>(v)]) * d * d;
    }
    const double std = std::sqrt(squares / count);
    result.mean.push_back(static_cast<float>(mean));
    result.std.push_back(std < 1.0 / 255.0 ? 1.0f : static_cast<float>(std));
  }
  return result;
}

}  // namespace baton::data
