// SampleTransform: option checks, the Philox draw and the crop/flip/normalise loop.
#include "runtime/data/sample_transform.h"

#include <algorithm>
#include <cmath>

#include "runtime/core/error.h"
#include "runtime/core/philox.h"
#include "runtime/data/random_streams.h"

namespace baton::data {

SampleTransform::SampleTransform(const Shape& image_shape, const Augmentation& augmentation,
                                 const Normalization& normalization)
    : augmentation_(augmentation) {
  BATON_CHECK(image_shape.rank() == 3, "images must be [C, H, W], not ", image_shape.str());
  channels_ = image_shape[0];
  height_ = image_shape[1];
  width_ = image_shape[2];
  const size_t c = static_cast<size_t>(channels_);
  const bool normalised = !normalization.mean.empty() || !normalization.std.empty();
  BATON_CHECK(!normalised || (normalization.mean.size() == c && normalization.std.size() == c),
              "normalization: expected one mean and one std per channel (", c, " channels), got ",
              normalization.mean.size(), " means and ", normalization.std.size(), " stds");
  BATON_CHECK(
      augmentation.crop_padding >= 0 && augmentation.crop_padding <= height_ && augmentation.crop_padding <= width_,
      "augmentation: crop_padding ", augmentation.crop_padding, " must be in 0 .. ", std::min(height_, width_),
      " for images ", image_shape.str());
  normalised_.resize(c * 256);
  for (size_t channel = 0; channel < c; ++channel) {
    const double mean = normalised ? normalization.mean[channel] : 0.0;
    const double std = normalised ? normalization.std[channel] : 1.0;
    BATON_CHECK(std::isfinite(mean) && std::isfinite(std) && std > 0, "normalization: channel ", channel, " has mean ",
                mean, " and std ", std, "; expected finite values and std > 0");
    for (int value = 0; value < 256; ++value) {
      normalised_[channel * 256 + static_cast<size_t>(value)] = static_cast<float>((value / 255.0 - mean) / std);
    }
  }
}

AugmentationDraw SampleTransform::draw(uint64_t seed, int64_t epoch, int64_t sample) const {
  AugmentationDraw d;
  if (augmentation_.crop_padding == 0 && !augmentation_.horizontal_flip) return d;
  const uint64_t stream = derive_seed(seed, RandomPurpose::augmentation, static_cast<uint64_t>(epoch));
  const philox::Block bits = philox::block_at(stream, static_cast<uint64_t>(sample));
  const auto positions = static_cast<uint32_t>(2 * augmentation_.crop_padding + 1);
  d.offset_y = scale_below(bits.v[0], positions);
  d.offset_x = scale_below(bits.v[1], positions);
  d.flip = augmentation_.horizontal_flip && (bits.v[2] >> 31) != 0;
  return d;
}

void SampleTransform::apply(const uint8_t* pixels, const AugmentationDraw& draw, float* out) const {
  const int64_t padding = augmentation_.crop_padding;
  for (int64_t c = 0; c < channels_; ++c) {
    const float* table = normalised_.data() + c * 256;
    const float black = table[0];
    const uint8_t* plane = pixels + c * height_ * width_;
    for (int64_t y = 0; y < height_; ++y) {
      float* row = out + (c * height_ + y) * width_;
      const int64_t source_y = y + draw.offset_y - padding;
      if (source_y < 0 || source_y >= height_) {
        for (int64_t x = 0; x < width_; ++x) row[x] = black;
        continue;
      }
      const uint8_t* source_row = plane + source_y * width_;
      for (int64_t x = 0; x < width_; ++x) {
        const int64_t source_x = (draw.flip ? width_ - 1 - x : x) + draw.offset_x - padding;
        row[x] = source_x >= 0 && source_x < width_ ? table[source_row[source_x]] : black;
      }
    }
  }
}

}  // namespace baton::data
