// DataLoader on CPU devices: contents, determinism across worker counts, epochs, seek/resume,
// drop_last, bad options, and LoaderPosition's JSON (workers and shards: test_loader_workers.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "runtime/data/loader.h"
#include "tests/runtime/data/loader_run.h"
#include "tests/runtime/data/test_datasets.h"
#include "tests/support/test_support.h"

namespace baton::data {
namespace {

using testing::IndexDataset;
using testing::options;
using testing::run_epochs;
using testing::SeenBatch;

TEST(DataLoader, EachEpochHoldsEverySampleOnceWithItsImage) {
  const IndexDataset dataset(23);
  const Stream stream = Stream::create(Device::cpu());
  DataLoader loader(dataset, options(5), Device::cpu());
  EXPECT_EQ(loader.batches_per_epoch(), 5);
  const int64_t image_elements = 3 * 4 * 5;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<int64_t> labels;
    for (int64_t b = 0; b < 5; ++b) {
      EXPECT_EQ(loader.position(), (LoaderPosition{epoch, b}));
      auto batch = loader.next(stream);
      ASSERT_TRUE(batch.has_value());
      EXPECT_EQ(batch->epoch, epoch);
      EXPECT_EQ(batch->index, b);
      const int64_t n = b < 4 ? 5 : 3;
      EXPECT_EQ(batch->input("images").shape(), Shape({n, 3, 4, 5}));
      EXPECT_EQ(batch->input("images").dtype(), DType::f32);
      EXPECT_EQ(batch->targets.shape(), Shape({n}));
      EXPECT_EQ(batch->targets.dtype(), DType::i64);
      const SeenBatch s = testing::seen(*batch, stream);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t sample = s.labels[static_cast<size_t>(i)];
        for (int64_t k = 0; k < image_elements; ++k) {
          ASSERT_EQ(s.images[static_cast<size_t>(i * image_elements + k)],
                    static_cast<float>(testing::index_pixel(sample, k) / 255.0))
              << "sample " << sample << " element " << k;
        }
        labels.push_back(sample);
      }
    }
    EXPECT_EQ(loader.position(), (LoaderPosition{epoch, 5}));
    EXPECT_FALSE(loader.next(stream).has_value());
    EXPECT_EQ(loader.position(), (LoaderPosition{epoch + 1, 0}));
    std::vector<int64_t> sorted = labels;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> all(23);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all) << "epoch " << epoch;
    EXPECT_NE(labels, all) << "epoch " << epoch << " was not shuffled";
  }
}

TEST(DataLoader, BatchesDoNotDependOnWorkerCount) {
  const IndexDataset dataset(37, Shape{3, 6, 6});
  const Stream stream = Stream::create(Device::cpu());
  LoaderOptions one = options(4, 1, 1), three = options(4, 3, 5);
  for (LoaderOptions* o : {&one, &three}) {
    o->augmentation = {2, true};
    o->normalization = {{0.4f, 0.5f, 0.6f}, {0.2f, 0.3f, 0.25f}};
  }
  DataLoader a(dataset, one, Device::cpu()), b(dataset, three, Device::cpu());
  const auto batches_a = run_epochs(a, 3, stream);
  const auto batches_b = run_epochs(b, 3, stream);
  ASSERT_EQ(batches_a.size(), 30u);
  EXPECT_TRUE(batches_a == batches_b);
}

TEST(DataLoader, EpochsHaveDifferentOrdersUnlessShuffleIsOff) {
  const IndexDataset dataset(40);
  const Stream stream = Stream::create(Device::cpu());
  auto labels_of = [](const std::vector<SeenBatch>& batches, int64_t epoch) {
    std::vector<int64_t> labels;
    for (const SeenBatch& b : batches) {
      if (b.epoch == epoch) labels.insert(labels.end(), b.labels.begin(), b.labels.end());
    }
    return labels;
  };
  DataLoader shuffled(dataset, options(8), Device::cpu());
  const auto batches = run_epochs(shuffled, 2, stream);
  EXPECT_NE(labels_of(batches, 0), labels_of(batches, 1));

  LoaderOptions in_order = options(8);
  in_order.shuffle = false;
  DataLoader ordered(dataset, in_order, Device::cpu());
  const auto plain = run_epochs(ordered, 2, stream);
  std::vector<int64_t> all(40);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(labels_of(plain, 0), all);
  EXPECT_EQ(labels_of(plain, 1), all);

  LoaderOptions other_seed = options(8);
  other_seed.seed = 18;
  DataLoader reseeded(dataset, other_seed, Device::cpu());
  EXPECT_NE(labels_of(run_epochs(reseeded, 1, stream), 0), labels_of(batches, 0));
}

TEST(DataLoader, SeekResumesExactlyMidEpoch) {
  const IndexDataset dataset(30);
  const Stream stream = Stream::create(Device::cpu());
  LoaderOptions o = options(4);
  o.augmentation = {1, true};
  DataLoader reference(dataset, o, Device::cpu());
  const auto expected = run_epochs(reference, 3, stream);  // 8 batches per epoch
  ASSERT_EQ(expected.size(), 24u);

  DataLoader resumed(dataset, o, Device::cpu());
  resumed.seek({1, 3});
  EXPECT_EQ(resumed.position(), (LoaderPosition{1, 3}));
  std::vector<SeenBatch> rest = run_epochs(resumed, 2, stream);
  ASSERT_EQ(rest.size(), 13u);
  EXPECT_TRUE(std::equal(rest.begin(), rest.end(), expected.begin() + 11));

  // Back to an earlier point on a loader with batches in flight, and to an epoch's end.
  resumed.seek({0, 6});
  auto batch = resumed.next(stream);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(testing::seen(*batch, stream) == expected[6]);
  resumed.seek({1, 8});
  EXPECT_FALSE(resumed.next(stream).has_value());
  batch = resumed.next(stream);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(testing::seen(*batch, stream) == expected[16]);

  EXPECT_ERROR_MENTIONS("seek to epoch 0 batch 9: expected epoch >= 0 and a batch in 0 .. 8", resumed.seek({0, 9}));
  EXPECT_ERROR_MENTIONS("seek to epoch -1", resumed.seek({-1, 0}));
}

TEST(DataLoader, DropLastDropsTheShortBatch) {
  const IndexDataset dataset(10);
  const Stream stream = Stream::create(Device::cpu());
  LoaderOptions keep = options(4), drop = options(4);
  drop.drop_last = true;
  DataLoader kept(dataset, keep, Device::cpu()), dropped(dataset, drop, Device::cpu());
  EXPECT_EQ(kept.batches_per_epoch(), 3);
  EXPECT_EQ(dropped.batches_per_epoch(), 2);
  const auto all = run_epochs(kept, 1, stream);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].labels.size(), 2u);
  const auto full = run_epochs(dropped, 2, stream);
  ASSERT_EQ(full.size(), 4u);
  for (const SeenBatch& b : full) EXPECT_EQ(b.labels.size(), 4u);
  // The kept batches are the same as without drop_last.
  EXPECT_TRUE(full[0] == all[0]);
  EXPECT_TRUE(full[1] == all[1]);

  LoaderOptions too_big = options(11);
  too_big.drop_last = true;
  EXPECT_ERROR_MENTIONS("has 10 samples, no full batch of 11 (drop_last is set)",
                        DataLoader(dataset, too_big, Device::cpu()));
}

TEST(DataLoader, RejectsBadOptions) {
  const IndexDataset dataset(8);
  EXPECT_ERROR_MENTIONS("batch_size must be positive, not 0", DataLoader(dataset, options(0), Device::cpu()));
  EXPECT_ERROR_MENTIONS("workers must be 1..256, not 0", DataLoader(dataset, options(2, 0), Device::cpu()));
  EXPECT_ERROR_MENTIONS("workers must be 1..256, not 2147483647",
                        DataLoader(dataset, options(2, 2147483647), Device::cpu()));
  EXPECT_ERROR_MENTIONS("prefetch must be at least 1, not 0", DataLoader(dataset, options(2, 1, 0), Device::cpu()));
  LoaderOptions bad_norm = options(2);
  bad_norm.normalization = {{0.5f}, {0.5f}};
  EXPECT_ERROR_MENTIONS("one mean and one std per channel (3 channels)", DataLoader(dataset, bad_norm, Device::cpu()));
}

TEST(LoaderPosition, JsonRoundTripAndErrors) {
  const LoaderPosition position{3, 17};
  const nlohmann::json json = position;
  EXPECT_EQ(json.dump(), R"({"epoch":3,"next_batch":17})");
  EXPECT_EQ(nlohmann::json::parse(json.dump()).get<LoaderPosition>(), position);
  EXPECT_ERROR_MENTIONS("the field 'next_batch' is missing",
                        nlohmann::json::parse(R"({"epoch":1})").get<LoaderPosition>());
  EXPECT_ERROR_MENTIONS("'epoch' must be a non-negative integer, not -2",
                        nlohmann::json::parse(R"({"epoch":-2,"next_batch":0})").get<LoaderPosition>());
  EXPECT_ERROR_MENTIONS("'next_batch' must be a non-negative integer, not \"4\"",
                        nlohmann::json::parse(R"({"epoch":2,"next_batch":"4"})").get<LoaderPosition>());
  EXPECT_ERROR_MENTIONS("unknown field 'batch'",
                        nlohmann::json::parse(R"({"epoch":2,"batch":4})").get<LoaderPosition>());
  EXPECT_ERROR_MENTIONS("expected an object", nlohmann::json::parse("[1, 2]").get<LoaderPosition>());
}

}  // namespace
}  // namespace baton::data
