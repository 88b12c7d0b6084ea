// "shapes": a generated 32x32 RGB classification dataset of ten kinds of drawn shapes with random
// size, position, foreground and background colours and pixel noise. Every image is a pure
// function of (seed, split, index) computed with Philox and integer arithmetic, so it is the same
// on every machine and compiler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/data/random_streams.h"

namespace baton::data {

class ShapesDataset : public Dataset {
 public:
  static constexpr int64_t kSide = 32;
  static constexpr int64_t kClasses = 10;
  static constexpr int64_t kDefaultTrainSize = 50000;
  static constexpr int64_t kDefaultTestSize = 10000;

  // `size` samples (the defaults above when negative). Train and test draw from different streams.
  ShapesDataset(Split split, uint64_t seed, int64_t size = -1);

  int64_t size() const override { return size_; }
  Shape image_shape() const override { return Shape{3, kSide, kSide}; }
  int64_t num_classes() const override { return kClasses; }
  // Label index % 10, so every run of ten consecutive samples holds each class once.
  void read(int64_t index, uint8_t* pixels, int64_t& label) const override;
  std::string name() const override;

  // The class names, by label: disk, ring, square, frame, triangle, diamond, plus, cross,
  // horizontal bar, vertical bar.
  static const std::vector<std::string>& class_names();

 private:
  Split split_;
  uint64_t seed_;
  RandomPurpose purpose_;  // one stream per split
  int64_t size_;
};

}  // namespace baton::data
