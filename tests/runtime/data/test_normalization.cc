// Measured normalisation: exact statistics of the sampled images, a constant channel centred only,
// the training split's values on both splits of open_dataset, shards as their whole.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/data/dataset_shard.h"
#include "runtime/data/normalization.h"
#include "tests/runtime/data/test_datasets.h"
#include "tests/support/test_support.h"

namespace baton::data {
namespace {

// Channel 0 holds the sample's index, channel 1 is always 200: one pixel per channel.
class TwoChannelDataset : public Dataset {
 public:
  explicit TwoChannelDataset(int64_t size) : size_(size) {}
  int64_t size() const override { return size_; }
  Shape image_shape() const override { return Shape{2, 1, 1}; }
  int64_t num_classes() const override { return 1; }
  void read(int64_t index, uint8_t* pixels, int64_t& label) const override {
    check_index(index);
    pixels[0] = static_cast<uint8_t>(index);
    pixels[1] = 200;
    label = 0;
  }
  std::string name() const override { return "two-channel dataset"; }

 private:
  int64_t size_;
};

// Mean and population deviation of v / 255.
std::pair<double, double> moments(const std::vector<int>& values) {
  double sum = 0, squares = 0;
  for (int v : values) sum += v / 255.0;
  const double mean = sum / static_cast<double>(values.size());
  for (int v : values) squares += (v / 255.0 - mean) * (v / 255.0 - mean);
  return {mean, std::sqrt(squares / static_cast<double>(values.size()))};
}

TEST(Normalization, MeasuresTheEvenlySpacedImagesExactly) {
  const TwoChannelDataset dataset(200);
  const Normalization all = measure_normalization(dataset);  // 200 < 1000 images: all of them
  std::vector<int> indices;
  for (int i = 0; i < 200; ++i) indices.push_back(i);
  auto [mean, std] = moments(indices);
  ASSERT_EQ(all.mean.size(), 2u);
  EXPECT_NEAR(all.mean[0], mean, 1e-6);
  EXPECT_NEAR(all.std[0], std, 1e-6);
  EXPECT_NEAR(all.mean[1], 200 / 255.0, 1e-6);
  EXPECT_EQ(all.std[1], 1.0f) << "a constant channel is centred, not divided by zero";

  const Normalization some = measure_normalization(dataset, 4);  // images 0, 50, 100, 150
  std::tie(mean, std) = moments({0, 50, 100, 150});
  EXPECT_NEAR(some.mean[0], mean, 1e-6);
  EXPECT_NEAR(some.std[0], std, 1e-6);
}

TEST(Normalization, AnEmptyDatasetIsAnError) {
  EXPECT_ERROR_MENTIONS("two-channel dataset: no images to measure the normalisation on",
                        measure_normalization(TwoChannelDataset(0)));
}

TEST(Normalization, ADatasetMeasuresItselfUnlessSetFirst) {
  const TwoChannelDataset measured(10);
  EXPECT_NEAR(measured.normalization().mean[1], 200 / 255.0, 1e-6);
  TwoChannelDataset fixed(10);
  fixed.set_normalization({{0.25f, 0.5f}, {2.0f, 3.0f}});
  EXPECT_EQ(fixed.normalization().std[1], 3.0f);
  EXPECT_ERROR_MENTIONS("two-channel dataset: the normalisation is already fixed",
                        fixed.set_normalization({{0.0f, 0.0f}, {1.0f, 1.0f}}));
}

TEST(Normalization, BothSplitsOfOpenDatasetUseTheTrainingSplitsStatistics) {
  const auto train = open_dataset("synthetic:3x8x8:10:64", Split::train, 3);
  const auto test = open_dataset("synthetic:3x8x8:10:64", Split::test, 3);
  const Normalization own_test = measure_normalization(*test);
  EXPECT_EQ(test->normalization().mean, train->normalization().mean);
  EXPECT_EQ(test->normalization().std, train->normalization().std);
  EXPECT_NE(own_test.mean, train->normalization().mean) << "the splits differ, so the test would show a mix-up";
  const DatasetShard shard(*test, 1, 4);
  EXPECT_EQ(shard.normalization().mean, train->normalization().mean);
}

TEST(Normalization, TheShapesStatisticsAgreeBetweenSplits) {
  const auto train = open_dataset("shapes", Split::train, 0);
  const Normalization& n = train->normalization();
  ASSERT_EQ(n.mean.size(), 3u);
  for (size_t c = 0; c < 3; ++c) {
    EXPECT_GT(n.std[c], 0.05f) << "channel " << c;
    EXPECT_LT(n.std[c], 0.5f) << "channel " << c;
  }
  // Estimates from 1000 images of each split agree to 0.03 (image backgrounds vary: a few percent of
  // a deviation, immaterial to training).
  const Normalization other = measure_normalization(*open_dataset("shapes", Split::test, 0));
  for (size_t c = 0; c < 3; ++c) {
    EXPECT_NEAR(other.mean[c], n.mean[c], 0.03) << "channel " << c;
    EXPECT_NEAR(other.std[c], n.std[c], 0.03) << "channel " << c;
  }
}

}  // namespace
}  // namespace baton::data
