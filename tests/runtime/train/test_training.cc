// End-to-end training on the CPU: the small CNN learns the synthetic problem in a few seconds.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "tests/runtime/train/small_cnn_run.h"

namespace baton::testing {
namespace {

TEST(Training, SmallCnnLearnsTheSyntheticProblemOnCpu) {
  const TrainingRun run = train(Device::cpu(), 60);
  const double first = run.losses.front();
  double last = 0;
  for (size_t i = run.losses.size() - 10; i < run.losses.size(); ++i) last += run.losses[i] / 10;
  std::cout << "loss " << first << " -> " << last << " (mean of the last 10 steps), held-out accuracy " << run.accuracy
            << "\n";
  EXPECT_NEAR(first, std::log(static_cast<double>(kClasses)), 0.3);  // starts near chance
  EXPECT_LT(last, 0.35);
  EXPECT_GT(run.accuracy, 0.9);
}

}  // namespace
}  // namespace baton::testing
