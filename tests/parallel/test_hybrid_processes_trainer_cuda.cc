// The Trainer over the hybrid across processes on GPUs, threads standing in for the processes (an
// in-process world, rank r on GPU r): 2 groups x 2 stages log the single-device CPU trainer's losses
// and evaluation (float32, to 1e-4), and their checkpoint, gathered from the four GPUs and written by
// rank 0 in the single-device format, resumes on one CPU device and continues that run.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "parallel/comm/inproc_communicator.h"
#include "parallel/pipeline/pipeline_trainer.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/planner.h"
#include "runtime/train/trainer.h"
#include "tests/parallel/image_mlp.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"
#include "tests/support/train_metrics.h"

namespace baton::parallel {
namespace {

namespace fs = std::filesystem;
using baton::testing::train_losses;

constexpr int64_t kBatch = 8;
constexpr double kRelative = 1e-4;  // GPU float32 against CPU float32

class HybridProcessesTrainerCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    BATON_REQUIRE_GPU();
    if (cuda_device_count() < 4) GTEST_SKIP() << "needs 4 GPUs; this machine has " << cuda_device_count();
    config_.data = "synthetic:3x8x8:4:64";
    config_.steps = 4;
    config_.batch_size = kBatch;
    config_.device = "cpu";
    config_.workers = 1;
    config_.log_every = 1;
    config_.eval_every = 2;
    config_.optimizer = {{"type", "sgd"}, {"momentum", 0.9}};
  }

  TrainSummary single_device(const TrainConfig& c) {
    const auto train = data::open_dataset(c.data, data::Split::train, 0);
    const auto test = data::open_dataset(c.data, data::Split::test, 0);
    return Trainer(graph_, c, *train, test.get(), Device::cpu()).run([] { return false; });
  }

  // 2 groups x 2 stages, world rank r on cuda:r, stopped after `stop_after` steps when > 0; rank 0's
  // summary (the one that prints and writes).
  TrainSummary across_threads(const TrainConfig& c, int stop_after) {
    const Profile profile = analytic_profile(graph_, "mlp", device_spec_by_name("cpu"), {.batch_sizes = {2}});
    PlanChoice choice;
    choice.groups = 2;
    choice.stages = 2;
    choice.micro_batches = 2;
    PlanSettings settings;
    settings.batch = static_cast<int>(kBatch);
    const EvaluatedPlan e = evaluate_plan(choice, profile, cluster_by_name("cpu-4"), settings);
    TrainSummary primary;
    std::vector<std::jthread> ranks;
    for (std::unique_ptr<comm::Communicator>& world : comm::make_inproc_communicators(4)) {
      ranks.emplace_back([&, world = std::shared_ptr<comm::Communicator>(std::move(world))] {
        const int rank = world->rank();
        try {
          PipelineTrainOptions options;
          options.devices = {Device::cuda(rank)};
          options.world = world;
          options.model = "mlp";
          PipelineTrainEngine engine(graph_, c, e.plan, e.schedule, options);
          const auto train = data::open_dataset(c.data, data::Split::train, 0);
          const auto test = data::open_dataset(c.data, data::Split::test, 0);
          int calls = 0;
          const TrainSummary summary = Trainer(graph_, c, *train, test.get(), engine).run([&] {
            return stop_after > 0 && ++calls == stop_after;
          });
          if (rank == 0) primary = summary;
        } catch (const std::exception& error) {
          ADD_FAILURE() << "rank " << rank << " threw: " << error.what();
        }
      });
    }
    ranks.clear();  // joins
    return primary;
  }

  const Graph graph_ = testing::image_mlp(kBatch, 8, 2, false);
  baton::testing::ScratchDir scratch_{"hybrid_processes_trainer"};
  const fs::path dir_ = scratch_.path();
  TrainConfig config_;
};

TEST_F(HybridProcessesTrainerCuda, LossesEvaluationAndCheckpointsFollowTheSingleDeviceTrainer) {
  TrainConfig single = config_;
  single.metrics = (dir_ / "single.jsonl").string();
  const TrainSummary reference = single_device(single);
  const std::vector<double> expected = train_losses(single.metrics);
  ASSERT_EQ(expected.size(), 4u);

  TrainConfig hybrid = config_;
  hybrid.metrics = (dir_ / "hybrid.jsonl").string();
  hybrid.checkpoint_dir = (dir_ / "hybrid").string();
  const TrainSummary summary = across_threads(hybrid, 0);
  const std::vector<double> losses = train_losses(hybrid.metrics);
  ASSERT_EQ(losses.size(), expected.size());
  for (size_t i = 0; i < losses.size(); ++i) EXPECT_NEAR(losses[i], expected[i], kRelative * expected[i]) << i;
  ASSERT_GT(reference.eval.samples, 0);
  EXPECT_EQ(summary.eval.samples, reference.eval.samples);
  EXPECT_NEAR(summary.eval.loss, reference.eval.loss, kRelative * reference.eval.loss);

  // Stopped after 2 steps, then resumed on one CPU device: steps 3 and 4 of the reference.
  TrainConfig stopped = config_;
  stopped.checkpoint_dir = (dir_ / "stopped").string();
  ASSERT_FALSE(across_threads(stopped, 2).checkpoint.empty());
  stopped.resume = true;
  stopped.metrics = (dir_ / "resumed.jsonl").string();
  EXPECT_EQ(single_device(stopped).steps, 4);
  const std::vector<double> resumed = train_losses(stopped.metrics);
  ASSERT_EQ(resumed.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(resumed[i], expected[2 + i], kRelative * expected[2 + i]) << i;
}

}  // namespace
}  // namespace baton::parallel
