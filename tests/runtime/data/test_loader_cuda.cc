// DataLoader on a GPU: batches copied on the loader's copy stream and used on another stream equal
// the CPU loader's, across epochs, with pinned buffers reused and after a seek.
#include <gtest/gtest.h>

#include "runtime/data/loader.h"
#include "runtime/data/shapes.h"
#include "tests/runtime/data/loader_run.h"
#include "tests/support/test_support.h"

namespace baton::data {
namespace {

using testing::run_epochs;

LoaderOptions cifar_like_options(int workers, int prefetch) {
  LoaderOptions o;
  o.batch_size = 32;
  o.seed = 5;
  o.workers = workers;
  o.prefetch = prefetch;
  o.augmentation = {4, true};
  o.normalization = {{0.49f, 0.48f, 0.45f}, {0.25f, 0.24f, 0.26f}};
  return o;
}

TEST(DataLoaderCuda, BatchesEqualTheCpuLoaders) {
  BATON_REQUIRE_GPU();
  const ShapesDataset dataset(Split::train, 3, 300);  // 10 batches, the last of 12
  const Stream cpu_stream = Stream::create(Device::cpu());
  const Stream compute = Stream::create(Device::cuda(0));
  DataLoader cpu(dataset, cifar_like_options(2, 2), Device::cpu());
  // One worker and one prefetch slot: the two pinned buffers are reused every other batch.
  DataLoader gpu(dataset, cifar_like_options(1, 1), Device::cuda(0));
  const auto expected = run_epochs(cpu, 3, cpu_stream);
  ASSERT_EQ(expected.size(), 30u);

  std::vector<testing::SeenBatch> actual;
  for (int epoch = 0; epoch < 3; ++epoch) {
    while (auto batch = gpu.next(compute)) {
      EXPECT_EQ(batch->input("images").device(), Device::cuda(0));
      EXPECT_EQ(batch->targets.device(), Device::cuda(0));
      actual.push_back(testing::seen(*batch, compute));
    }
  }
  EXPECT_TRUE(actual == expected);

  gpu.seek({1, 4});
  auto batch = gpu.next(compute);
  ASSERT_TRUE(batch.has_value());
  EXPECT_TRUE(testing::seen(*batch, compute) == expected[14]);
}

TEST(DataLoaderCuda, BatchesHeldAcrossManyStepsStayIntact) {
  BATON_REQUIRE_GPU();
  const ShapesDataset dataset(Split::test, 4, 256);
  const Stream compute = Stream::create(Device::cuda(0));
  DataLoader cpu(dataset, cifar_like_options(2, 2), Device::cpu());
  DataLoader gpu(dataset, cifar_like_options(2, 1), Device::cuda(0));
  const auto expected = run_epochs(cpu, 1, Stream::create(Device::cpu()));
  // Take the whole epoch before reading any batch back: every copy must have finished reading its
  // pinned buffer before a worker refilled it.
  std::vector<Batch> held;
  while (auto batch = gpu.next(compute)) held.push_back(std::move(*batch));
  ASSERT_EQ(held.size(), expected.size());
  for (size_t i = 0; i < held.size(); ++i) EXPECT_TRUE(testing::seen(held[i], compute) == expected[i]) << "batch " << i;
}

}  // namespace
}  // namespace baton::data
