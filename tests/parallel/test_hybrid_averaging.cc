// Model averaging inside the hybrid (2 groups x 2 stages on CPU virtual devices, through the
// Trainer, float32): periodic averaging after every step of SGD without momentum logs the
// synchronous hybrid's losses; every variant logs the losses of plain data parallelism with the same
// averaging and exchange (one micro-batch per group: each group's pipeline computes what one replica
// does); a run resumed from a checkpoint taken between two meetings logs the uninterrupted run's
// losses bit for bit; and a pipeline of one group refuses to average.
#include <gtest/gtest.h>

#include <filesystem>

#include "parallel/dp/data_parallel_engine.h"
#include "parallel/pipeline/pipeline_trainer.h"
#include "runtime/train/trainer.h"
#include "tests/parallel/hybrid_trainer_util.h"
#include "tests/parallel/image_mlp.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"
#include "tests/support/train_metrics.h"

namespace baton::parallel {
namespace {

using baton::parallel::testing::image_mlp;
using baton::testing::train_losses;

constexpr int64_t kBatch = 8;
constexpr double kRelative = 1e-5;  // float32: the summation order differs

const ModelAveraging kPeriodic{.kind = Averaging::periodic, .every = 2};
const ModelAveraging kBmuf{.kind = Averaging::bmuf, .every = 2, .block_momentum = 0.5};
const ModelAveraging kEasgd{.kind = Averaging::easgd, .every = 2, .elastic_beta = 0.9};
const ModelAveraging kPostLocal{.kind = Averaging::post_local, .every = 2, .local_after = 2};
const ModelAveraging kBmufByTree{
    .kind = Averaging::bmuf, .every = 2, .block_momentum = 0.5, .exchange = ExchangeKind::tree};

class HybridAveraging : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = testing::short_hybrid_run(kBatch);
    train_ = data::open_dataset(config_.data, data::Split::train, 0);
    test_ = data::open_dataset(config_.data, data::Split::test, 0);
  }

  // `groups` x 2 stages, `micro_batches` per group, averaging as `averaging` says; the logged losses.
  // Stopped (and checkpointed, with a checkpoint_dir) after `stop_after` steps when > 0.
  std::vector<double> hybrid(TrainConfig c, const std::string& name, int groups, int micro_batches,
                             const ModelAveraging& averaging, int stop_after = 0) {
    c.metrics = (dir_ / (name + ".jsonl")).string();
    PipelineTrainOptions options;
    const EvaluatedPlan e = testing::two_stage_hybrid(graph_, groups, micro_batches, kBatch, options);
    options.averaging = averaging;
    PipelineTrainEngine engine(graph_, c, e.plan, e.schedule, options);
    run(c, engine, stop_after);
    if (averaging.active() && stop_after == 0) meetings_ = engine.groups().averaging_meetings();
    return train_losses(c.metrics);
  }

  // Plain data parallelism over 2 replicas with the same averaging.
  std::vector<double> data_parallel(TrainConfig c, const std::string& name, const ModelAveraging& averaging) {
    c.metrics = (dir_ / (name + ".jsonl")).string();
    DataParallelOptions options;
    options.devices = {Device::cpu(0), Device::cpu(1)};
    options.averaging = averaging;
    DataParallelEngine engine(graph_, c, std::move(options));
    run(c, engine, 0);
    data_parallel_meetings_ = engine.averaging_meetings();
    return train_losses(c.metrics);
  }

  void run(const TrainConfig& c, TrainEngine& engine, int stop_after) {
    int calls = 0;
    const auto stop = [&] { return stop_after > 0 && ++calls == stop_after; };
    Trainer(graph_, c, *train_, test_.get(), engine).run(stop);
  }

  static ::testing::AssertionResult close(const std::vector<double>& losses, const std::vector<double>& expected) {
    if (losses.size() != expected.size()) {
      return ::testing::AssertionFailure() << losses.size() << " losses, expected " << expected.size();
    }
    for (size_t i = 0; i < losses.size(); ++i) {
      if (std::abs(losses[i] - expected[i]) > kRelative * std::abs(expected[i])) {
        return ::testing::AssertionFailure() << "step " << i + 1 << ": " << losses[i] << " vs " << expected[i];
      }
    }
    return ::testing::AssertionSuccess();
  }

  baton::testing::ScratchDir scratch_{"hybrid_averaging"};
  const std::filesystem::path dir_ = scratch_.path();
  const Graph graph_ = image_mlp(kBatch, 8, 3, true);
  TrainConfig config_;
  std::unique_ptr<data::Dataset> train_, test_;
  int64_t meetings_ = 0, data_parallel_meetings_ = 0;
};

TEST_F(HybridAveraging, PeriodicAveragingAfterEveryStepOfPlainSgdIsTheSynchronousHybrid) {
  TrainConfig plain = config_;
  plain.optimizer = {{"type", "sgd"}};
  const std::vector<double> synchronous = hybrid(plain, "synchronous", 2, 2, {});
  ASSERT_EQ(synchronous.size(), 6u);
  const std::vector<double> averaged = hybrid(plain, "periodic", 2, 2, {.kind = Averaging::periodic, .every = 1});
  EXPECT_TRUE(close(averaged, synchronous));
  EXPECT_EQ(meetings_, 6);
}

TEST_F(HybridAveraging, EveryVariantLogsPlainDataParallelismsLosses) {
  for (const ModelAveraging& averaging : {kPeriodic, kBmuf, kEasgd, kPostLocal, kBmufByTree}) {
    const std::string name =
        std::string(averaging_name(averaging.kind)) + "-" + std::string(exchange_name(averaging.exchange));
    SCOPED_TRACE(name);
    const std::vector<double> expected = data_parallel(config_, "dp-" + name, averaging);
    ASSERT_EQ(expected.size(), 6u);
    EXPECT_TRUE(close(hybrid(config_, "hybrid-" + name, 2, 1, averaging), expected));
    EXPECT_GT(meetings_, 0);
    EXPECT_EQ(meetings_, data_parallel_meetings_);
  }
}

TEST_F(HybridAveraging, AResumedRunGoesOnBitForBitFromBetweenTwoMeetings) {
  for (const ModelAveraging& averaging : {kPeriodic, kBmuf, kEasgd, kPostLocal}) {
    const std::string name(averaging_name(averaging.kind));
    SCOPED_TRACE(name);
    // Both runs agree on the model for a checkpoint after step 3 (periodic averaging goes on from the
    // groups' mean).
    TrainConfig uninterrupted = config_;
    uninterrupted.checkpoint_every = 3;
    uninterrupted.checkpoint_dir = (dir_ / ("whole-ckpt-" + name)).string();
    const std::vector<double> whole = hybrid(uninterrupted, "whole-" + name, 2, 2, averaging);
    ASSERT_EQ(whole.size(), 6u);
    TrainConfig interrupted = uninterrupted;
    interrupted.checkpoint_dir = (dir_ / ("ckpt-" + name)).string();
    // Stopped after step 3: the groups met after step 2 and stepped apart in step 3.
    (void)hybrid(interrupted, "first-" + name, 2, 2, averaging, 3);
    interrupted.resume = true;
    const std::vector<double> resumed = hybrid(interrupted, "resumed-" + name, 2, 2, averaging);
    ASSERT_EQ(resumed.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(resumed[i], whole[3 + i]) << "step " << 4 + i;
  }
}

TEST_F(HybridAveraging, APipelineOfOneGroupRefusesToAverage) {
  const std::string message = baton::testing::error_message([&] { (void)hybrid(config_, "one", 1, 2, kBmuf); });
  EXPECT_NE(message.find("needs --groups G with G >= 2"), std::string::npos) << message;
}

}  // namespace
}  // namespace baton::parallel
