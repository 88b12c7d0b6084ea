// DataParallelEngine with replicas on two GPUs (NCCL communicators): it follows the same run on two
// virtual CPU devices, keeps the replicas' parameters bitwise equal, evaluates and checkpoints like
// it, and a bad label in the second replica's rows is reported by the step's loss, naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "parallel/dp/data_parallel_engine.h"
#include "tests/parallel/data_parallel_test_util.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using baton::testing::all_close;
using baton::testing::to_doubles;
using testing::dp_batch;
using testing::dp_conv_bn;
using testing::dp_optimizer;

constexpr double kDataParallelCudaLr = 0.05;

TrainConfig dp_config() {
  TrainConfig config;
  config.optimizer = dp_optimizer();
  config.tf32 = false;
  return config;
}

DataParallelOptions on(std::vector<Device> devices) {
  DataParallelOptions options;
  options.devices = std::move(devices);
  options.buckets = {256, 512};  // several buckets per step
  return options;
}

// dp_batch(seed) made on the host, then moved to `engine`'s input device.
data::Batch batch_for(DataParallelEngine& engine, const Graph& graph, uint64_t seed, int64_t bad_row = -1) {
  Context& ctx = engine.input_context();
  const Stream host = Stream::create(Device::cpu());
  data::Batch b = dp_batch(graph, host, seed);
  if (bad_row >= 0) b.targets.data<int64_t>()[bad_row] = 99;
  return b.map([&](const Tensor& t) { return t.to(ctx.device(), ctx.stream()); });
}

class DataParallelCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    BATON_REQUIRE_GPU();
    if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << cuda_device_count();
  }
};

TEST_F(DataParallelCuda, TwoGpusFollowTheRunOnTwoCpuDevices) {
  const Graph graph = dp_conv_bn(DType::f32, 8);
  DataParallelEngine gpus(graph, dp_config(), on({Device::cuda(0), Device::cuda(1)}));
  DataParallelEngine cpus(graph, dp_config(), on({Device::cpu(0), Device::cpu(1)}));
  gpus.initialize(11);
  cpus.initialize(11);
  for (uint64_t step = 0; step < 3; ++step) {
    const double gpu_loss = gpus.step(batch_for(gpus, graph, step), step, kDataParallelCudaLr).value();
    const double cpu_loss = cpus.step(batch_for(cpus, graph, step), step, kDataParallelCudaLr).value();
    EXPECT_NEAR(gpu_loss, cpu_loss, 1e-4 * std::abs(cpu_loss)) << "step " << step;
  }
  for (int r = 0; r < 2; ++r) {
    const Stream gpu_stream = Stream::create(gpus.params(r).device());
    const Stream cpu_stream = Stream::create(Device::cpu());
    const std::vector<double> gpu_params = to_doubles(gpus.params(r).params_flat(), gpu_stream);
    EXPECT_TRUE(all_close(gpu_params, to_doubles(cpus.params(0).params_flat(), cpu_stream), 1e-4, 1e-5))
        << "replica " << r;
    // NCCL gives both replicas the same gradients, so the same parameters, bit for bit.
    const Stream first = Stream::create(gpus.params(0).device());
    EXPECT_EQ(gpu_params, to_doubles(gpus.params(0).params_flat(), first)) << "replica " << r;
  }
}

TEST_F(DataParallelCuda, ABadLabelInTheSecondReplicasRowsIsReportedByTheLoss) {
  unsetenv("BATON_SYNC_CHECKS");  // deferred checks, whatever the environment says
  const Graph graph = dp_conv_bn(DType::f32, 8);
  DataParallelEngine engine(graph, dp_config(), on({Device::cuda(0), Device::cuda(1)}));
  engine.initialize(3);
  engine.step(batch_for(engine, graph, 0), 0, kDataParallelCudaLr).value();
  PendingLoss loss =
      engine.step(batch_for(engine, graph, 1, /*bad_row=*/6), 1, kDataParallelCudaLr);  // row 6: replica 1's
  EXPECT_ERROR_MENTIONS("in data-parallel replica 1", loss.value());
  EXPECT_ERROR_MENTIONS("99", loss.value());  // the same error again
}

}  // namespace
}  // namespace baton::parallel
