// DataLoader's workers and shards: every batch cut into disjoint row ranges, DatasetShard, bounded
// prefetch, worker errors thrown from next(), prompt shutdown mid-epoch, and batches on the target
// CPU device.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
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
using testing::options;
using testing::run_epochs;
using testing::SeenBatch;
using testing::SlowDataset;

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
  EXPECT_EQ(batch->targets.to_vector<int64_t>(stream), (std::vector<int64_t>{0, 1, 2, 3}));

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
  EXPECT_EQ(batch->input("images").device(), Device::cpu(1));
  EXPECT_EQ(batch->targets.device(), Device::cpu(1));
  EXPECT_ERROR_MENTIONS("data loader for cpu:1: next() was given a stream on cpu:0",
                        loader.next(Stream::create(Device::cpu(0))));
}

}  // namespace
}  // namespace baton::data
