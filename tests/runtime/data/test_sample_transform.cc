// SampleTransform: normalisation values, random crop with zero padding and flip against a
// straightforward reference (pad, crop, mirror), the range of the draws, and option checks.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "runtime/data/sample_transform.h"
#include "tests/runtime/data/test_datasets.h"
#include "tests/support/test_support.h"

namespace baton::data {
namespace {

constexpr int64_t kC = 3, kH = 4, kW = 5;

std::vector<uint8_t> image(int64_t index) {
  std::vector<uint8_t> pixels(kC * kH * kW);
  for (int64_t k = 0; k < kC * kH * kW; ++k) pixels[static_cast<size_t>(k)] = testing::index_pixel(index, k);
  return pixels;
}

TEST(SampleTransform, NormalisesEachChannelAfterDividingBy255) {
  const Normalization norm{{0.5f, 0.25f, 0.0f}, {0.2f, 0.5f, 2.0f}};
  const SampleTransform transform(Shape{kC, kH, kW}, {}, norm);
  const auto pixels = image(3);
  std::vector<float> out(pixels.size(), -1000.f);
  transform.apply(pixels.data(), transform.draw(1, 0, 3), out.data());
  for (size_t k = 0; k < pixels.size(); ++k) {
    const size_t c = k / (kH * kW);
    EXPECT_NEAR(out[k], (pixels[k] / 255.0 - norm.mean[c]) / norm.std[c], 1e-6) << "element " << k;
  }
  const SampleTransform plain(Shape{kC, kH, kW}, {}, {});
  plain.apply(pixels.data(), {}, out.data());
  for (size_t k = 0; k < pixels.size(); ++k) EXPECT_FLOAT_EQ(out[k], static_cast<float>(pixels[k] / 255.0));
}

// The reference: pad with black, crop at the offset, then mirror the crop.
float reference(const std::vector<uint8_t>& pixels, const AugmentationDraw& d, int64_t padding, int64_t c, int64_t y,
                int64_t x) {
  const int64_t cropped_x = d.flip ? kW - 1 - x : x;
  const int64_t py = y + d.offset_y, px = cropped_x + d.offset_x;  // in the padded image
  const bool in_image = py >= padding && py < padding + kH && px >= padding && px < padding + kW;
  const uint8_t value = in_image ? pixels[static_cast<size_t>((c * kH + py - padding) * kW + px - padding)] : 0;
  return static_cast<float>(value / 255.0);
}

TEST(SampleTransform, CropWithZeroPaddingAndFlipMatchTheReference) {
  const int64_t padding = 2;
  const SampleTransform transform(Shape{kC, kH, kW}, {padding, true}, {});
  std::set<int64_t> offsets_y, offsets_x;
  int flips = 0;
  const int samples = 400;
  for (int64_t sample = 0; sample < samples; ++sample) {
    const AugmentationDraw d = transform.draw(9, 2, sample);
    ASSERT_GE(d.offset_y, 0);
    ASSERT_LE(d.offset_y, 2 * padding);
    ASSERT_GE(d.offset_x, 0);
    ASSERT_LE(d.offset_x, 2 * padding);
    offsets_y.insert(d.offset_y);
    offsets_x.insert(d.offset_x);
    flips += d.flip;
    const auto pixels = image(sample);
    std::vector<float> out(pixels.size(), -1.f);
    transform.apply(pixels.data(), d, out.data());
    for (int64_t c = 0; c < kC; ++c) {
      for (int64_t y = 0; y < kH; ++y) {
        for (int64_t x = 0; x < kW; ++x) {
          ASSERT_EQ(out[static_cast<size_t>((c * kH + y) * kW + x)], reference(pixels, d, padding, c, y, x))
              << "sample " << sample << " at " << c << "," << y << "," << x;
        }
      }
    }
  }
  EXPECT_EQ(offsets_y.size(), 5u);
  EXPECT_EQ(offsets_x.size(), 5u);
  EXPECT_GT(flips, samples / 3);
  EXPECT_LT(flips, 2 * samples / 3);
}

TEST(SampleTransform, FlipMirrorsEachRow) {
  const SampleTransform transform(Shape{kC, kH, kW}, {0, true}, {});
  const auto pixels = image(1);
  std::vector<float> out(pixels.size());
  transform.apply(pixels.data(), AugmentationDraw{0, 0, true}, out.data());
  for (int64_t row = 0; row < kC * kH; ++row) {
    for (int64_t x = 0; x < kW; ++x) {
      EXPECT_FLOAT_EQ(out[static_cast<size_t>(row * kW + x)],
                      pixels[static_cast<size_t>(row * kW + kW - 1 - x)] / 255.f);
    }
  }
}

TEST(SampleTransform, DrawsDependOnSeedEpochAndSampleOnly) {
  const SampleTransform transform(Shape{kC, kH, kW}, {4, true}, {});
  auto same = [](const AugmentationDraw& a, const AugmentationDraw& b) {
    return a.offset_y == b.offset_y && a.offset_x == b.offset_x && a.flip == b.flip;
  };
  int differ_epoch = 0, differ_seed = 0;
  for (int64_t sample = 0; sample < 50; ++sample) {
    EXPECT_TRUE(same(transform.draw(1, 3, sample), transform.draw(1, 3, sample)));
    differ_epoch += !same(transform.draw(1, 3, sample), transform.draw(1, 4, sample));
    differ_seed += !same(transform.draw(1, 3, sample), transform.draw(2, 3, sample));
  }
  EXPECT_GT(differ_epoch, 40);
  EXPECT_GT(differ_seed, 40);
}

TEST(SampleTransform, RejectsOptionsThatDoNotFitTheImages) {
  EXPECT_ERROR_MENTIONS("one mean and one std per channel (3 channels), got 2 means and 2 stds",
                        SampleTransform(Shape{kC, kH, kW}, {}, {{0.f, 0.f}, {1.f, 1.f}}));
  EXPECT_ERROR_MENTIONS("channel 1 has mean 0 and std 0",
                        SampleTransform(Shape{kC, kH, kW}, {}, {{0.f, 0.f, 0.f}, {1.f, 0.f, 1.f}}));
  EXPECT_ERROR_MENTIONS("crop_padding 5 must be in 0 .. 4", SampleTransform(Shape{kC, kH, kW}, {5, false}, {}));
  EXPECT_ERROR_MENTIONS("crop_padding -1", SampleTransform(Shape{kC, kH, kW}, {-1, false}, {}));
}

}  // namespace
}  // namespace baton::data
