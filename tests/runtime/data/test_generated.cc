// The generated datasets: shapes (determinism, streams per split and seed, class balance, variety
// within a class, and that a class-mean classifier on raw pixels does poorly), synthetic (spec
// grammar and determinism).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/data/shapes.h"
#include "runtime/data/synthetic.h"
#include "tests/support/test_support.h"

namespace baton::data {
namespace {

std::vector<uint8_t> pixels_of(const Dataset& dataset, int64_t index, int64_t* label = nullptr) {
  std::vector<uint8_t> pixels(static_cast<size_t>(dataset.image_bytes()));
  int64_t l = -1;
  dataset.read(index, pixels.data(), l);
  if (label != nullptr) *label = l;
  return pixels;
}

// FNV-1a over the bytes, continuing from `hash`.
uint64_t fingerprint(const std::vector<uint8_t>& bytes, uint64_t hash = 1469598103934665603ull) {
  for (uint8_t byte : bytes) hash = (hash ^ byte) * 1099511628211ull;
  return hash;
}

TEST(Shapes, SameSeedSameBytesOtherSeedOrSplitOtherBytes) {
  const ShapesDataset a(Split::train, 7), b(Split::train, 7), other_seed(Split::train, 8), test(Split::test, 7);
  EXPECT_EQ(a.size(), 50000);
  EXPECT_EQ(test.size(), 10000);
  EXPECT_EQ(a.image_shape(), Shape({3, 32, 32}));
  for (int64_t index : {0, 1, 9, 12345, 49999}) {
    const auto pixels = pixels_of(a, index);
    EXPECT_EQ(pixels, pixels_of(b, index)) << "index " << index;
    EXPECT_NE(pixels, pixels_of(other_seed, index)) << "index " << index;
    if (index < test.size()) {
      EXPECT_NE(pixels, pixels_of(test, index)) << "index " << index;
    }
  }
}

TEST(Shapes, KnownBytesPinTheGenerator) {
  // A change to the generator changes every dataset made with it; this catches it.
  const ShapesDataset shapes(Split::train, 0);
  uint64_t hash = fingerprint({});  // over the first 20 images and labels
  for (int64_t index = 0; index < 20; ++index) {
    int64_t label = -1;
    hash = fingerprint(pixels_of(shapes, index, &label), hash);
    hash = fingerprint({static_cast<uint8_t>(label)}, hash);
  }
  EXPECT_EQ(hash, 15123568521276589147ull);
}

TEST(Shapes, ClassesAreBalancedAndImagesOfOneClassDiffer) {
  const ShapesDataset shapes(Split::train, 3, 1000);
  std::vector<int64_t> counts(10);
  for (int64_t i = 0; i < shapes.size(); ++i) {
    int64_t label = -1;
    pixels_of(shapes, i, &label);
    ASSERT_GE(label, 0);
    ASSERT_LT(label, 10);
    ++counts[static_cast<size_t>(label)];
  }
  for (int64_t c = 0; c < 10; ++c) EXPECT_EQ(counts[static_cast<size_t>(c)], 100) << ShapesDataset::class_names()[c];
  for (int64_t c = 0; c < 10; ++c) {
    std::set<uint64_t> distinct;
    for (int64_t k = 0; k < 20; ++k) distinct.insert(fingerprint(pixels_of(shapes, c + 10 * k)));
    EXPECT_EQ(distinct.size(), 20u) << ShapesDataset::class_names()[c];
  }
  EXPECT_EQ(ShapesDataset::class_names().size(), 10u);
}

TEST(Shapes, AClassMeanClassifierOnPixelsDoesPoorly) {
  // Random colours (either brighter or darker than the background) and positions leave the class
  // means nearly flat, so the nearest class mean is a poor guess; chance is 10%.
  const ShapesDataset train(Split::train, 1, 3000), test(Split::test, 1, 500);
  const size_t n = 3 * 32 * 32;
  std::vector<std::vector<double>> means(10, std::vector<double>(n));
  for (int64_t i = 0; i < train.size(); ++i) {
    int64_t label = -1;
    const auto p = pixels_of(train, i, &label);
    for (size_t k = 0; k < n; ++k) means[static_cast<size_t>(label)][k] += p[k] / 300.0;
  }
  int correct = 0;
  for (int64_t i = 0; i < test.size(); ++i) {
    int64_t label = -1;
    const auto p = pixels_of(test, i, &label);
    int64_t best = -1;
    double best_distance = 0;
    for (int64_t c = 0; c < 10; ++c) {
      double distance = 0;
      for (size_t k = 0; k < n; ++k) distance += std::pow(p[k] - means[static_cast<size_t>(c)][k], 2);
      if (best < 0 || distance < best_distance) best = c, best_distance = distance;
    }
    correct += best == label;
  }
  EXPECT_LT(correct / 500.0, 0.35);
}

TEST(Synthetic, SpecGrammar) {
  const SyntheticOptions defaults = parse_synthetic_spec("synthetic");
  EXPECT_EQ(defaults.image_shape, Shape({3, 224, 224}));
  EXPECT_EQ(defaults.classes, 1000);
  EXPECT_EQ(defaults.samples, 1000000);
  const SyntheticOptions small = parse_synthetic_spec("synthetic:3x32x32:10");
  EXPECT_EQ(small.image_shape, Shape({3, 32, 32}));
  EXPECT_EQ(small.classes, 10);
  EXPECT_EQ(small.samples, 1000000);
  const SyntheticOptions all = parse_synthetic_spec("synthetic:1x28x30:7:123");
  EXPECT_EQ(all.image_shape, Shape({1, 28, 30}));
  EXPECT_EQ(all.samples, 123);
  EXPECT_EQ(all.test_samples, 123);  // SAMPLES given: each split's size
  EXPECT_ERROR_MENTIONS("image shape '3x32' must be CxHxW", parse_synthetic_spec("synthetic:3x32"));
  EXPECT_ERROR_MENTIONS("height '0' is not a positive integer", parse_synthetic_spec("synthetic:3x0x32"));
  EXPECT_ERROR_MENTIONS("CLASSES 'ten' is not a positive integer", parse_synthetic_spec("synthetic:3x32x32:ten"));
  EXPECT_ERROR_MENTIONS("SAMPLES '5x' is not a positive integer", parse_synthetic_spec("synthetic:3x32x32:10:5x"));
  EXPECT_ERROR_MENTIONS("expected synthetic[:CxHxW[:CLASSES[:SAMPLES]]]",
                        parse_synthetic_spec("synthetic:3x32x32:10:5:9"));
}

// Without SAMPLES the test split is small: evaluating a million images took many minutes.
TEST(Synthetic, TheDefaultTestSplitIsSmall) {
  const SyntheticOptions defaults = parse_synthetic_spec("synthetic:3x8x8:10");
  EXPECT_EQ(defaults.test_samples, 10000);
  EXPECT_EQ(SyntheticDataset(defaults, Split::train, 0).size(), 1000000);
  EXPECT_EQ(SyntheticDataset(defaults, Split::test, 0).size(), 10000);
}

TEST(Synthetic, DeterministicPerSeedAndSplitWithLabelsInRange) {
  const auto a = open_dataset("synthetic:3x5x7:4:50", Split::train, 11);
  const auto b = open_dataset("synthetic:3x5x7:4:50", Split::train, 11);
  const auto other = open_dataset("synthetic:3x5x7:4:50", Split::train, 12);
  const auto test = open_dataset("synthetic:3x5x7:4:50", Split::test, 11);
  EXPECT_EQ(a->size(), 50);
  EXPECT_EQ(a->image_shape(), Shape({3, 5, 7}));
  std::set<int64_t> labels;
  for (int64_t i = 0; i < 50; ++i) {
    int64_t la = -1, lb = -1;
    const auto pa = pixels_of(*a, i, &la);
    EXPECT_EQ(pa, pixels_of(*b, i, &lb));
    EXPECT_EQ(la, lb);
    EXPECT_NE(pa, pixels_of(*other, i));
    EXPECT_NE(pa, pixels_of(*test, i));
    EXPECT_GE(la, 0);
    EXPECT_LT(la, 4);
    labels.insert(la);
    EXPECT_GT(std::set<uint8_t>(pa.begin(), pa.end()).size(), 20u);  // 105 random bytes, not a pattern
  }
  EXPECT_EQ(labels.size(), 4u);
}

}  // namespace
}  // namespace baton::data
