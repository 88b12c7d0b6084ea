// Turning one dataset sample into network input: random crop with zero padding and horizontal
// flip (drawn from Philox keyed by (seed, epoch, sample), so the draw never depends on which worker
// or when), then per-channel normalisation of pixel / 255.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/shape.h"

namespace baton::data {

// Per channel, applied to pixel / 255: (pixel / 255 - mean[c]) / std[c]. Both empty: pixel / 255.
struct Normalization {
  std::vector<float> mean, std;
};

struct Augmentation {
  int64_t crop_padding = 0;      // pad each side with black (pixel 0), then crop back at a random offset
  bool horizontal_flip = false;  // mirror left-right with probability 1/2
};

// One sample's augmentation: the crop's top-left corner in the padded image (0 .. 2 * padding) and
// whether the crop is mirrored.
struct AugmentationDraw {
  int64_t offset_y = 0, offset_x = 0;
  bool flip = false;
};

class SampleTransform {
 public:
  // Checks the options against the images: a mean and std per channel (or none), std > 0,
  // 0 <= crop_padding <= the image's height and width.
  SampleTransform(const Shape& image_shape, const Augmentation& augmentation, const Normalization& normalization);

  // The augmentation of dataset sample `sample` in `epoch` for the loader seeded with `seed`.
  AugmentationDraw draw(uint64_t seed, int64_t epoch, int64_t sample) const;
  // Writes the C*H*W floats of the augmented, normalised image `pixels` (C*H*W bytes) to `out`:
  // out[c][y][x] = normalised(padded[c][y + offset_y][x' + offset_x]), x' = W-1-x when flipped,
  // where padded has `crop_padding` black pixels around the image.
  void apply(const uint8_t* pixels, const AugmentationDraw& draw, float* out) const;

 private:
  int64_t channels_, height_, width_;
  Augmentation augmentation_;
  std::vector<float> normalised_;  // [channel][pixel value 0..255]
};

}  // namespace baton::data
