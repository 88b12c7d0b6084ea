// Model averaging (local SGD) in the data-parallel engine, float64 on CPU virtual devices: averaging
// every step equals synchronous data parallelism to rounding (SGD with momentum and weight decay is
// linear in the gradients), averaging every 2 steps leaves the replicas apart after odd steps and
// equal after even ones, a checkpoint (like an evaluation) averages first; the variants not yet
// available are named.
#include <gtest/gtest.h>

#include "parallel/dp/data_parallel_engine.h"
#include "runtime/train/checkpoint.h"
#include "tests/parallel/data_parallel_test_util.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using baton::testing::all_close;
using baton::testing::error_message;
using baton::testing::to_doubles;
using testing::dp_batch;
using testing::dp_mlp;
using testing::dp_optimizer;

constexpr double kLr = 0.05;

std::unique_ptr<DataParallelEngine> engine(const Graph& graph, Averaging kind, int every) {
  TrainConfig config;
  config.optimizer = dp_optimizer();
  DataParallelOptions options;
  options.devices = {Device::cpu(0), Device::cpu(1)};
  options.averaging = {kind, every};
  auto e = std::make_unique<DataParallelEngine>(graph, config, std::move(options));
  e->initialize(11);
  return e;
}

double step(DataParallelEngine& e, const Graph& graph, uint64_t seed) {
  const Stream host = Stream::create(Device::cpu());
  return e.step(dp_batch(graph, host, seed), seed, kLr).value();
}

std::vector<double> params(const DataParallelEngine& e, int replica) {
  return to_doubles(e.params(replica).params_flat(), Stream::create(Device::cpu()));
}

TEST(ModelAveraging, EveryStepEqualsSynchronousDataParallelism) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const auto local = engine(graph, Averaging::periodic, 1), sync = engine(graph, Averaging::none, 1);
  for (uint64_t s = 0; s < 3; ++s) {
    const double expected = step(*sync, graph, s);
    EXPECT_NEAR(step(*local, graph, s), expected, 1e-12 * std::abs(expected)) << "step " << s;
  }
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(all_close(params(*local, r), params(*sync, 0), 1e-12, 1e-12)) << r;
  EXPECT_TRUE(local->last_step(0).buckets.empty());  // no gradient all-reduce
}

TEST(ModelAveraging, EveryTwoStepsTheReplicasMeetOnEvenSteps) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const auto local = engine(graph, Averaging::periodic, 2), sync = engine(graph, Averaging::none, 1);
  step(*local, graph, 0);
  step(*sync, graph, 0);
  EXPECT_NE(params(*local, 0), params(*local, 1));  // each stepped on its own rows
  step(*local, graph, 1);
  step(*sync, graph, 1);
  EXPECT_EQ(params(*local, 0), params(*local, 1));                            // averaged
  EXPECT_FALSE(all_close(params(*local, 0), params(*sync, 0), 1e-9, 1e-12));  // not the synchronous run
}

TEST(ModelAveraging, CheckpointsAverageTheReplicasFirst) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const auto local = engine(graph, Averaging::periodic, 4);
  step(*local, graph, 0);
  const std::vector<double> p0 = params(*local, 0), p1 = params(*local, 1);
  ASSERT_NE(p0, p1);
  std::vector<double> mean(p0.size());
  for (size_t i = 0; i < mean.size(); ++i) mean[i] = 0.5 * (p0[i] + p1[i]);
  const baton::testing::ScratchDir scratch("model_averaging");
  CheckpointManager manager(scratch.path().string(), 1);
  (void)local->save_checkpoint(manager, {});  // agrees on the model before writing
  EXPECT_TRUE(all_close(params(*local, 0), mean, 1e-15, 1e-15));
  EXPECT_EQ(params(*local, 0), params(*local, 1));
}

TEST(ModelAveraging, VariantsNotYetAvailableAreNamed) {
  for (const char* name : {"bmuf", "easgd", "post-local"}) {
    EXPECT_NE(error_message([&] { parse_averaging(name); }).find("is not available yet"), std::string::npos) << name;
  }
  EXPECT_NE(error_message([] { parse_averaging("sometimes"); }).find("expected none or periodic"), std::string::npos);
}

}  // namespace
}  // namespace baton::parallel
