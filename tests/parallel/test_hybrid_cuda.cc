// The hybrid on two GPUs (NCCL communicator per stage): 2 groups x 2 stages, group g on cuda:g (its
// stages on two streams), follow the same hybrid on four CPU virtual devices for both gradient
// synchronisations, and the two groups keep bitwise the same parameters.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/parallel/hybrid_test_util.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::all_close;
using baton::testing::to_doubles;

class HybridCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    BATON_REQUIRE_GPU();
    if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << cuda_device_count();
  }
};

std::vector<double> stage_values(PipelineExecutor& pipe, int s) {
  return to_doubles(pipe.stage_params(s).params_flat(), Stream::create(pipe.stage(s).device()));
}

TEST_F(HybridCuda, TwoGpusFollowTheHybridOnFourCpuDevices) {
  const Graph graph = mlp(DType::f32);
  const Plan plan = hybrid_plan(graph, {2, 2}, 2, 1);
  const Schedule schedule = hybrid_schedule(graph, plan, ScheduleKind::one_f_one_b);
  for (GradSyncStrategy strategy : {GradSyncStrategy::bucket, GradSyncStrategy::partition}) {
    SCOPED_TRACE(grad_sync_name(strategy));
    HybridOptions options;
    options.pipeline.optimizer = kSgd;
    options.grad_sync = strategy;
    options.buckets = {.first_bucket_bytes = 256, .bucket_bytes = 512};
    HybridExecutor gpus(graph, plan, schedule, {{Device::cuda(0), Device::cuda(0)}, {Device::cuda(1), Device::cuda(1)}},
                        options);
    HybridExecutor cpus(graph, plan, schedule, plan_devices(plan), options);
    gpus.initialize(11);
    cpus.initialize(11);
    const Stream host = Stream::create(Device::cpu());
    for (uint64_t step = 0; step < 3; ++step) {
      const std::vector<Tensor> inputs = batch(DType::f32, host, 5 + step);
      const StepOptions step_options{.seed = step, .lr = kLr};
      const double gpu_loss = gpus.step(inputs, step_options);
      const double cpu_loss = cpus.step(inputs, step_options);
      EXPECT_NEAR(gpu_loss, cpu_loss, 1e-4 * std::abs(cpu_loss)) << "step " << step;
    }
    for (int s = 0; s < 2; ++s) {
      const std::vector<double> group0 = stage_values(gpus.group(0), s);
      EXPECT_TRUE(all_close(group0, stage_values(cpus.group(0), s), 1e-4, 1e-5)) << "stage " << s;
      EXPECT_EQ(group0, stage_values(gpus.group(1), s)) << "stage " << s;  // NCCL: the same bits in both groups
    }
  }
}

}  // namespace
}  // namespace baton::parallel
