// A data-parallel step on two emulated GPUs never waits for the host: the replicas' copies of the
// batch, the bucketed NCCL all-reduces and the optimiser are ordered on the devices, and reading the
// loss is the one wait (BATON_CUDA=EMU builds only: the emulator counts host waits).
#include <gtest/gtest.h>

#include "baton_emu/introspection.h"
#include "parallel/dp/data_parallel_engine.h"
#include "tests/parallel/data_parallel_test_util.h"

namespace baton::parallel {
namespace {

size_t data_parallel_host_syncs() { return baton_emu::host_sync_counts().total(); }

TEST(DataParallelEmu, AStepOnTwoGpusDoesNotWaitForThem) {
  BATON_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << cuda_device_count();
  const Graph graph = testing::dp_conv_bn(DType::f32, 8);
  TrainConfig config;
  config.optimizer = testing::dp_optimizer();
  DataParallelOptions options;
  options.devices = {Device::cuda(0), Device::cuda(1)};
  options.buckets = {256, 512};
  DataParallelEngine engine(graph, config, std::move(options));
  engine.initialize(5);
  Context& ctx = engine.input_context();
  const auto batch = [&](uint64_t seed) {
    const data::Batch b = testing::dp_batch(graph, ctx.stream(), seed);
    ctx.synchronize();
    return b;
  };
  engine.step(batch(0), 0, 0.05).value();  // the first step chooses convolution algorithms, which waits
  for (uint64_t step = 1; step <= 2; ++step) {
    const data::Batch b = batch(step);
    const size_t before = data_parallel_host_syncs();
    PendingLoss loss = engine.step(b, step, 0.05);
    EXPECT_EQ(data_parallel_host_syncs() - before, 0u) << "step " << step << " waited for a GPU";
    loss.value();
    EXPECT_EQ(data_parallel_host_syncs() - before, 2u) << "reading the loss waits for each replica's read-back";
  }
}

}  // namespace
}  // namespace baton::parallel
