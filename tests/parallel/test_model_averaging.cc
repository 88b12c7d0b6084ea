// Model averaging (local SGD) in the data-parallel engine, float64 on CPU virtual devices: averaging
// every step equals synchronous data parallelism to rounding (SGD with momentum and weight decay is
// linear in the gradients), averaging every 2 steps leaves the replicas apart after odd steps and
// equal after even ones, a checkpoint (like an evaluation) averages first; the variants' names and
// bad knobs; the config file's averaging fields.
#include <gtest/gtest.h>

#include "parallel/dp/data_parallel_engine.h"
#include "parallel/parallel_config.h"
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

std::unique_ptr<DataParallelEngine> averaging_engine(const Graph& graph, Averaging kind, int every) {
  return testing::averaging_engine(graph, {.kind = kind, .every = every});
}

double step(DataParallelEngine& e, const Graph& graph, uint64_t seed) {
  return testing::averaging_step(e, graph, seed, kLr);
}

std::vector<double> params(const DataParallelEngine& e, int replica) {
  return to_doubles(e.params(replica).params_flat(), Stream::create(Device::cpu()));
}

TEST(ModelAveraging, EveryStepEqualsSynchronousDataParallelism) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const auto local = averaging_engine(graph, Averaging::periodic, 1),
             sync = averaging_engine(graph, Averaging::none, 1);
  for (uint64_t s = 0; s < 3; ++s) {
    const double expected = step(*sync, graph, s);
    EXPECT_NEAR(step(*local, graph, s), expected, 1e-12 * std::abs(expected)) << "step " << s;
  }
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(all_close(params(*local, r), params(*sync, 0), 1e-12, 1e-12)) << r;
  EXPECT_TRUE(local->last_step(0).buckets.empty());  // no gradient all-reduce
}

TEST(ModelAveraging, EveryTwoStepsTheReplicasMeetOnEvenSteps) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const auto local = averaging_engine(graph, Averaging::periodic, 2),
             sync = averaging_engine(graph, Averaging::none, 1);
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
  const auto local = averaging_engine(graph, Averaging::periodic, 4);
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

TEST(ModelAveraging, VariantsAreNamedAndBadKnobsRefused) {
  for (Averaging kind :
       {Averaging::none, Averaging::periodic, Averaging::bmuf, Averaging::easgd, Averaging::post_local}) {
    EXPECT_EQ(parse_averaging(averaging_name(kind)), kind);
  }
  EXPECT_EQ(averaging_name(Averaging::post_local), "post-local");
  EXPECT_NE(error_message([] {
              parse_averaging("sometimes");
            }).find("unknown --model-averaging 'sometimes' (expected none, periodic, bmuf, easgd or post-local)"),
            std::string::npos);
  EXPECT_NE(
      error_message([] { parse_exchange("star"); }).find("unknown --averaging-exchange 'star' (expected ring or tree)"),
      std::string::npos);
  const auto refused = [](ModelAveraging a) { return error_message([&] { check_model_averaging(a, 2); }); };
  EXPECT_NE(refused({.every = 0}).find("--average-every must be at least 1"), std::string::npos);
  EXPECT_NE(refused({.block_momentum = 1.0}).find("--block-momentum must be in [0, 1)"), std::string::npos);
  EXPECT_NE(refused({.block_lr = 0}).find("--block-lr must be greater than 0"), std::string::npos);
  EXPECT_NE(refused({.elastic_beta = 1.5}).find("--elastic-beta must be in (0, 1]"), std::string::npos);
  EXPECT_NE(refused({.local_after = -1}).find("--local-after must be at least 0"), std::string::npos);
  EXPECT_NE(refused({.nodes = {0}}).find("1 node numbers for 2 replicas"), std::string::npos);
  // The schedule: post-local SGD is synchronous for K steps, then meets every H.
  const ModelAveraging post{.kind = Averaging::post_local, .every = 2, .local_after = 3};
  std::vector<bool> sync, meet;
  for (int s = 0; s < 7; ++s) {
    sync.push_back(post.synchronous_step(s));
    meet.push_back(post.averages_after(s));
  }
  EXPECT_EQ(sync, (std::vector<bool>{true, true, true, false, false, false, false}));
  EXPECT_EQ(meet, (std::vector<bool>{false, false, false, false, true, false, true}));
  EXPECT_DOUBLE_EQ(ModelAveraging{}.block_momentum_for(4), 0.75);
}

TEST(ModelAveraging, ConfigFieldsAreReadCheckedAndWritten) {
  ParallelConfig p;
  p.update_from_json({{"data_parallel", 4},
                      {"model_averaging", "bmuf"},
                      {"average_every", 8},
                      {"block_momentum", 0.5},
                      {"block_lr", 0.9},
                      {"block_nesterov", false},
                      {"averaging_exchange", "tree"},
                      {"averaging_cluster", "h200-2x8"}},
                     "run.json");
  const ModelAveraging a = model_averaging_of(p, 4);
  EXPECT_EQ(a.kind, Averaging::bmuf);
  EXPECT_EQ(a.every, 8);
  EXPECT_EQ(a.block_momentum, 0.5);
  EXPECT_EQ(a.block_lr, 0.9);
  EXPECT_FALSE(a.block_nesterov);
  EXPECT_EQ(a.exchange, ExchangeKind::tree);
  EXPECT_EQ(a.nodes, (std::vector<int>{0, 0, 0, 0}));  // replicas 0-3 on the first node of 8
  ParallelConfig back;
  back.update_from_json(p.to_json(), "round trip");
  EXPECT_EQ(back.to_json(), p.to_json());
  back.update_from_json({{"block_momentum", nullptr}}, "run.json");
  EXPECT_FALSE(back.block_momentum.has_value());  // null: 1 - 1/N
  EXPECT_DOUBLE_EQ(model_averaging_of(back, 4).block_momentum_for(4), 0.75);

  ParallelConfig easgd;
  easgd.model_averaging = Averaging::easgd;
  easgd.local_after = 3;
  EXPECT_NE(error_message([&] {
              model_averaging_of(easgd, 2);
            }).find("--local-after is for --model-averaging post-local (got easgd)"),
            std::string::npos);
  easgd.local_after = 0;
  EXPECT_NE(error_message([&] {
              easgd.update_from_json({{"averaging_exchange", "mesh"}}, "run.json");
            }).find("unknown --averaging-exchange 'mesh'"),
            std::string::npos);
}

}  // namespace
}  // namespace baton::parallel
