// End-to-end training on CUDA: the same run as on the CPU, step by step within tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "tests/runtime/train/small_cnn_run.h"

namespace baton::testing {
namespace {

TEST(Training, CudaRunFollowsTheCpuRun) {
  BATON_REQUIRE_GPU();
  const TrainingRun cpu = train(Device::cpu(), 8);
  const TrainingRun gpu = train(Device::cuda(0), 8);
  EXPECT_TRUE(all_close(gpu.losses, cpu.losses, 1e-3, 1e-4));
}

}  // namespace
}  // namespace baton::testing
