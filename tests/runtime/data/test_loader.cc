// DataLoader on CPU devices: contents, determinism across worker counts, epochs, seek/resume,
// drop_last, bounded prefetch, worker errors, shutdown mid-epoch, and LoaderPosition's JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <thread>

#include "runtime/data/dataset_shard.h"
#include "runtime/data/loader.h"
#include "tests/runtime/data/loader_run.h"
#include "tests/runtime/data/test_datasets.h"
#include "tests/support/test_support.h"

namespace baton::data {
namespace {

using testing::FailingDataset;
using testing::IndexDataset;
using testing::run_epochs;
using testing::SeenBatch;
using testing::SlowDataset;

LoaderOptions options(int64_t batch_size, int workers = 2, int prefetch = 2) {
  LoaderOptions o;
  o.batch_size = batch_size;
  o.workers = workers;
  o.prefetch = prefetch;
  o.seed = 17;
  return o;
}

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
      EXPECT_EQ(batch->images.shape(), Shape({n, 3, 4, 5}));
      EXPECT_EQ(batch->images.dtype(), DType::f32);
      EXPECT_EQ(batch->labels.shape(), Shape({n}));
      EXPECT_EQ(batch->labels.dtype(), DType::i64);
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

// Counts reads, to see how far ahead the workers decode.
class CountingDataset : public IndexDataset {
 public:
  using IndexDataset::IndexDataset;
  void read(int64_t index, uint8_t* pixels, int64_t& label) const override {
    ++reads;
    IndexDataset::read(index, pixels, label);
  }
  mutable std::atomic<int64_t> reads{0};
};

TEST(DataLoader, ShardsCutEveryBatchIntoDisjointRowRangesInOrder) {
  const IndexDataset dataset(23);
  const Stream stream = Stream::create(Device::cpu());
  LoaderOptions whole_options = options(8);
  whole_options.drop_last = true;
  DataLoader whole(dataset, whole_options, Device::cpu());
  const std::vector<SeenBatch> expected = run_epochs(whole, 2, stream);
  std::vector<std::vector<SeenBatch>> shards;
  for (int k = 0; k < 3; ++k) {  // 8 rows: 3, 3 and 2
    LoaderOptions o = whole_options;
    o.shard = k;
    o.shards = 3;
    DataLoader loader(dataset, o, Device::cpu());
    shards.push_back(run_epochs(loader, 2, stream));
    ASSERT_EQ(shards.back().size(), expected.size());
  }
  for (size_t b = 0; b < expected.size(); ++b) {
    SeenBatch joined{expected[b].epoch, expected[b].index, {}, {}};
    for (int k = 0; k < 3; ++k) {
      const SeenBatch& part = shards[static_cast<size_t>(k)][b];
      EXPECT_EQ(part.labels.size(), k < 2 ? 3u : 2u);
      joined.labels.insert(joined.labels.end(), part.labels.begin(), part.labels.end());
      joined.images.insert(joined.images.end(), part.images.begin(), part.images.end());
    }
    EXPECT_EQ(joined, expected[b]) << "batch " << b;
  }
  LoaderOptions bad = whole_options;
  bad.shard = 3;
  bad.shards = 3;
  EXPECT_THROW(DataLoader(dataset, bad, Device::cpu()), Error);
}

TEST(DatasetShard, ShardsHoldEverySampleOnceInOrder) {
  const IndexDataset dataset(23);
  std::vector<int64_t> labels;
  std::vector<uint8_t> pixels(static_cast<size_t>(dataset.image_bytes()));
  for (int k = 0; k < 4; ++k) {
    const DatasetShard shard(dataset, k, 4);
    EXPECT_NE(shard.name().find("shard " + std::to_string(k) + " of 4"), std::string::npos);
    for (int64_t i = 0; i < shard.size(); ++i) {
      int64_t label = -1;
      shard.read(i, pixels.data(), label);
      labels.push_back(label);
    }
    int64_t label = -1;
    EXPECT_THROW(shard.read(shard.size(), pixels.data(), label), Error);
  }
  std::vector<int64_t> all(23);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(labels, all);
  EXPECT_THROW(DatasetShard(dataset, 2, 2), Error);
}

TEST(DataLoader, PrefetchIsBounded) {
  const CountingDataset dataset(1000);
  DataLoader loader(dataset, options(10, 2, 3), Device::cpu());
  const int64_t bound = (2 + 3) * 10;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (dataset.reads < bound && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(dataset.reads.load(), bound);
  ASSERT_TRUE(loader.next(Stream::create(Device::cpu())).has_value());
  const auto later = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (dataset.reads < bound + 10 && std::chrono::steady_clock::now() < later) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(dataset.reads.load(), bound + 10);
}

TEST(DataLoader, WorkerErrorsAreThrownFromNextWithTheDatasetMessage) {
  const FailingDataset dataset(20, 9, /*baton_error=*/true);
  const Stream stream = Stream::create(Device::cpu());
  LoaderOptions o = options(4, 3, 2);
  o.shuffle = false;
  DataLoader loader(dataset, o, Device::cpu());
  ASSERT_TRUE(loader.next(stream).has_value());
  ASSERT_TRUE(loader.next(stream).has_value());
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string message = ::baton::testing::error_message([&] { loader.next(stream); });
    EXPECT_NE(message.find("'broken.bin' record 9: label 200 is out of range"), std::string::npos) << message;
    EXPECT_NE(message.find("loading batch 2 of epoch 0 from index dataset"), std::string::npos) << message;
  }
  loader.seek({0, 0});
  auto batch = loader.next(stream);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->labels.to_vector<int64_t>(stream), (std::vector<int64_t>{0, 1, 2, 3}));

  const FailingDataset foreign(20, 0, /*baton_error=*/false);
  DataLoader other(foreign, o, Device::cpu());
  EXPECT_ERROR_MENTIONS("index dataset: disk on fire", other.next(stream));
}

TEST(DataLoader, ShutdownMidEpochIsPrompt) {
  // One batch takes 400 samples x 2 ms, 0.8 s; shutdown stops the workers between samples instead
  // of letting them finish the batches they are decoding.
  const SlowDataset dataset(100000, std::chrono::milliseconds(2));
  using Clock = std::chrono::steady_clock;
  auto loader = std::make_unique<DataLoader>(dataset, options(400, 3, 2), Device::cpu());
  ASSERT_TRUE(loader->next(Stream::create(Device::cpu())).has_value());
  auto start = Clock::now();
  loader.reset();
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(400));

  loader = std::make_unique<DataLoader>(dataset, options(400, 3, 2), Device::cpu());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  start = Clock::now();
  loader.reset();
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(400));
}

TEST(DataLoader, BatchesLiveOnTheTargetCpuDevice) {
  const IndexDataset dataset(8);
  DataLoader loader(dataset, options(4), Device::cpu(1));
  auto batch = loader.next(Stream::create(Device::cpu(1)));
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->images.device(), Device::cpu(1));
  EXPECT_EQ(batch->labels.device(), Device::cpu(1));
  EXPECT_ERROR_MENTIONS("data loader for cpu:1: next() was given a stream on cpu:0",
                        loader.next(Stream::create(Device::cpu(0))));
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
