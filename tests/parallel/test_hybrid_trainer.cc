// The hybrid through the Trainer (PipelineTrainEngine with G groups) on CPU virtual devices, float32:
// 2 groups x 2 stages log the single-device trainer's losses (both gradient synchronisations), its
// evaluation runs through group 0, a hybrid checkpoint (the single-device format) resumes on one
// device, and a single-device checkpoint resumes as a hybrid, continuing the uninterrupted run.
#include <gtest/gtest.h>

#include <filesystem>

#include "parallel/parallel_training.h"
#include "parallel/pipeline/pipeline_trainer.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/planner.h"
#include "runtime/train/trainer.h"
#include "tests/parallel/hybrid_trainer_util.h"
#include "tests/parallel/image_mlp.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/train_metrics.h"

namespace baton::parallel {
namespace {

using baton::parallel::testing::image_mlp;

namespace fs = std::filesystem;
using baton::testing::train_losses;

constexpr int64_t kBatch = 8;
constexpr double kRelative = 1e-5;  // float32: the summation order differs

class HybridTrainer : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = testing::short_hybrid_run(kBatch);
    train_ = data::open_dataset(config_.data, data::Split::train, 0);
    test_ = data::open_dataset(config_.data, data::Split::test, 0);
  }

  // `groups` x 2 stages (groups 0: one device; kReplicated: 2 stages of 2 and 1 replicas), stopped
  // after `stop_after` steps when > 0.
  static constexpr int kReplicated = -1;
  TrainSummary train(const Graph& graph, const TrainConfig& c, int groups, GradSyncStrategy sync, int stop_after = 0) {
    int calls = 0;
    const auto stop = [&] { return stop_after > 0 && ++calls == stop_after; };
    if (groups == 0) return Trainer(graph, c, *train_, test_.get(), Device::cpu()).run(stop);
    if (groups == kReplicated) return train_replicated(graph, c, sync, stop);
    PipelineTrainOptions options;
    const EvaluatedPlan e = testing::two_stage_hybrid(graph, groups, 2, kBatch, options);
    options.grad_sync = sync;
    PipelineTrainEngine engine(graph, c, e.plan, e.schedule, options);
    EXPECT_EQ(engine.groups().groups(), groups);
    return Trainer(graph, c, *train_, test_.get(), engine).run(stop);
  }

  TrainSummary train_replicated(const Graph& graph, const TrainConfig& c, GradSyncStrategy sync,
                                const std::function<bool()>& stop) {
    const Profile profile = analytic_profile(graph, "image_mlp", device_spec_by_name("cpu"), {.batch_sizes = {1, 2}});
    PlanChoice choice;
    choice.stages = 2;
    choice.micro_batches = 4;
    PlanSettings settings;
    settings.batch = static_cast<int>(kBatch);
    Plan plan = evaluate_plan(choice, profile, cluster_by_name("cpu-3"), settings).plan;
    plan.stages[0].replicas = 2;  // PipeDream's 2-1
    assign_devices(plan);
    PipelineTrainOptions options;
    options.devices = stage_replica_devices(plan, {Device::cpu(0), Device::cpu(1), Device::cpu(2)});
    options.grad_sync = sync;
    PipelineTrainEngine engine(graph, c, plan, plan_schedule(plan, profile, ScheduleKind::one_f_one_b), options);
    EXPECT_EQ(engine.executor().num_stages(), 3);  // three replicas of two stages
    return Trainer(graph, c, *train_, test_.get(), engine).run(stop);
  }

  // Both gradient synchronisations of `groups` x 2 stages (kReplicated: stages of 2 and 1 replicas)
  // log the single-device trainer's losses and evaluate every test sample as it does.
  void expect_like_one_device(const Graph& graph, int groups) {
    TrainConfig single = config_;
    single.eval_every = 1;
    single.metrics = (dir_ / "single.jsonl").string();
    const TrainSummary reference = train(graph, single, 0, GradSyncStrategy::bucket);
    const std::vector<double> expected = train_losses(single.metrics);
    ASSERT_EQ(expected.size(), 6u);
    for (GradSyncStrategy sync : {GradSyncStrategy::bucket, GradSyncStrategy::partition}) {
      SCOPED_TRACE(grad_sync_name(sync));
      TrainConfig parallel = single;
      parallel.metrics = (dir_ / ("parallel-" + std::string(grad_sync_name(sync)) + ".jsonl")).string();
      const TrainSummary summary = train(graph, parallel, groups, sync);
      EXPECT_TRUE(continues(train_losses(parallel.metrics), expected, 0));
      ASSERT_GT(reference.eval.samples, 0);
      EXPECT_EQ(summary.eval.samples, reference.eval.samples);  // every test sample once
      EXPECT_NEAR(summary.eval.loss, reference.eval.loss, kRelative * reference.eval.loss);
    }
  }

  ::testing::AssertionResult continues(const std::vector<double>& losses, const std::vector<double>& expected,
                                       size_t from) {
    if (losses.size() + from != expected.size()) {
      return ::testing::AssertionFailure()
             << losses.size() << " losses from step " << from + 1 << ", expected " << expected.size() - from;
    }
    for (size_t i = 0; i < losses.size(); ++i) {
      if (std::abs(losses[i] - expected[from + i]) > kRelative * std::abs(expected[from + i])) {
        return ::testing::AssertionFailure()
               << "step " << from + i + 1 << ": " << losses[i] << " vs " << expected[from + i];
      }
    }
    return ::testing::AssertionSuccess();
  }

  baton::testing::ScratchDir scratch_{"hybrid_trainer"};
  const fs::path dir_ = scratch_.path();
  TrainConfig config_;
  std::unique_ptr<data::Dataset> train_, test_;
};

TEST_F(HybridTrainer, LossesAndEvaluationEqualTheSingleDeviceTrainers) {
  expect_like_one_device(image_mlp(kBatch, 8, 3, true), 2);
}

TEST_F(HybridTrainer, CheckpointsMoveBetweenTheHybridAndOneDevice) {
  const Graph graph = image_mlp(kBatch, 8, 3, true);
  TrainConfig reference = config_;
  reference.metrics = (dir_ / "reference.jsonl").string();
  train(graph, reference, 0, GradSyncStrategy::bucket);
  const std::vector<double> expected = train_losses(reference.metrics);
  ASSERT_EQ(expected.size(), 6u);

  TrainConfig hybrid = config_, single = config_;
  hybrid.checkpoint_dir = (dir_ / "hybrid").string();
  single.checkpoint_dir = (dir_ / "single").string();
  ASSERT_FALSE(train(graph, hybrid, 2, GradSyncStrategy::partition, 3).checkpoint.empty());
  ASSERT_FALSE(train(graph, single, 0, GradSyncStrategy::bucket, 3).checkpoint.empty());

  hybrid.resume = single.resume = true;
  hybrid.metrics = (dir_ / "hybrid-to-single.jsonl").string();
  single.metrics = (dir_ / "single-to-hybrid.jsonl").string();
  EXPECT_EQ(train(graph, hybrid, 0, GradSyncStrategy::bucket).steps, 6);  // the hybrid's checkpoint on one device
  EXPECT_TRUE(continues(train_losses(hybrid.metrics), expected, 3));
  EXPECT_EQ(train(graph, single, 2, GradSyncStrategy::bucket).steps, 6);  // one device's as 2 x 2
  EXPECT_TRUE(continues(train_losses(single.metrics), expected, 3));
}

// Stages of 2 and 1 replicas through the Trainer: the single-device losses and evaluation, and
// checkpoints (written from each stage's first replica) moving both ways.
TEST_F(HybridTrainer, ReplicatedStagesTrainAndMoveCheckpointsLikeOneDevice) {
  const Graph graph = image_mlp(kBatch, 8, 3, true);
  expect_like_one_device(graph, kReplicated);
  TrainConfig reference = config_;
  reference.metrics = (dir_ / "reference.jsonl").string();
  train(graph, reference, 0, GradSyncStrategy::bucket);
  const std::vector<double> expected = train_losses(reference.metrics);
  TrainConfig from_replicas = config_, from_one = config_;
  from_replicas.checkpoint_dir = (dir_ / "replicas").string();
  from_one.checkpoint_dir = (dir_ / "one").string();
  ASSERT_FALSE(train(graph, from_replicas, kReplicated, GradSyncStrategy::bucket, 3).checkpoint.empty());
  ASSERT_FALSE(train(graph, from_one, 0, GradSyncStrategy::bucket, 3).checkpoint.empty());
  from_replicas.resume = from_one.resume = true;
  from_replicas.metrics = (dir_ / "replicas-to-one.jsonl").string();
  from_one.metrics = (dir_ / "one-to-replicas.jsonl").string();
  EXPECT_EQ(train(graph, from_replicas, 0, GradSyncStrategy::bucket).steps, 6);
  EXPECT_TRUE(continues(train_losses(from_replicas.metrics), expected, 3));
  EXPECT_EQ(train(graph, from_one, kReplicated, GradSyncStrategy::bucket).steps, 6);
  EXPECT_TRUE(continues(train_losses(from_one.metrics), expected, 3));
}

}  // namespace
}  // namespace baton::parallel
