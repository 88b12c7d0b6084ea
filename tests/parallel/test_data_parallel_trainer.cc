// The data-parallel engine through the Trainer on CPU virtual devices: losses and evaluation equal
// the single-device trainer's (a model without BatchNorm), checkpoints are in the single-device
// format and resume across replica counts, a resumed run with BatchNorm equals the uninterrupted
// one bit for bit, and the configuration checks of --data-parallel.
#include <gtest/gtest.h>

#include <filesystem>

#include "layers/graph_builder.h"
#include "parallel/parallel_training.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/trainer.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"
#include "tests/support/train_metrics.h"

namespace baton::parallel {
namespace {

namespace fs = std::filesystem;
using baton::testing::train_losses;

constexpr int64_t kTrainerBatch = 8;

// x [8, 3, 8, 8] -> flatten -> linear 16 -> relu -> linear 16 -> tanh -> linear 4 -> cross entropy.
Graph image_mlp() {
  layers::GraphBuilder g;
  ValueId x = g.flatten(g.input("x", {kTrainerBatch, 3, 8, 8}), "flatten");
  const ValueId labels = g.input("labels", {kTrainerBatch}, DType::i64);
  x = g.relu(g.linear(x, 16, "fc1"), "act1");
  x = g.tanh(g.linear(x, 16, "fc2"), "act2");
  const ValueId logits = g.linear(x, 4, "head");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

// x [8, 3, 8, 8] -> conv 4 -> batch norm -> relu -> flatten -> linear 4 -> cross entropy.
Graph trainer_bn_cnn() {
  layers::GraphBuilder g;
  ValueId x = g.input("x", {kTrainerBatch, 3, 8, 8});
  const ValueId labels = g.input("labels", {kTrainerBatch}, DType::i64);
  x = g.relu(g.batch_norm2d(g.conv2d(x, {.out_channels = 4, .padding = 1, .bias = false}, "conv1"), {}, "bn1"),
             "relu1");
  const ValueId logits = g.linear(g.flatten(x, "flatten"), 4, "head");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

class DataParallelTrainer : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.data = "synthetic:3x8x8:4:64";
    config_.steps = 6;
    config_.batch_size = kTrainerBatch;
    config_.device = "cpu";
    config_.workers = 1;
    config_.eval_every = 1;
    config_.log_every = 1;
    config_.optimizer = {{"type", "sgd"}, {"momentum", 0.9}, {"weight_decay", 5e-4}};
    train_ = data::open_dataset(config_.data, data::Split::train, 0);
    test_ = data::open_dataset(config_.data, data::Split::test, 0);
  }

  // A run of `graph` with `replicas` data-parallel replicas (0: the single-device trainer), stopped
  // after `stop_after` steps when > 0.
  TrainSummary train(const Graph& graph, const TrainConfig& c, int replicas, int stop_after = 0) {
    int calls = 0;
    const auto stop = [&] { return stop_after > 0 && ++calls == stop_after; };
    if (replicas == 0) return Trainer(graph, c, *train_, test_.get(), Device::cpu()).run(stop);
    ParallelConfig p;
    p.data_parallel = replicas;
    const std::unique_ptr<DataParallelEngine> engine = make_data_parallel_engine(graph, c, p);
    return Trainer(graph, c, *train_, test_.get(), *engine).run(stop);
  }

  TrainConfig with_metrics(const std::string& name) const {
    TrainConfig c = config_;
    c.metrics = (dir_ / (name + ".jsonl")).string();
    return c;
  }

  baton::testing::ScratchDir scratch_{"data_parallel_trainer"};
  const fs::path dir_ = scratch_.path();
  TrainConfig config_;
  std::unique_ptr<data::Dataset> train_, test_;
};

void expect_near_all(const std::vector<double>& actual, const std::vector<double>& expected, double rtol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], rtol * std::abs(expected[i])) << "step " << i + 1;
  }
}

TEST_F(DataParallelTrainer, LossesAndEvaluationEqualTheSingleDeviceTrainers) {
  const Graph graph = image_mlp();
  const TrainConfig single = with_metrics("single");
  const TrainSummary reference = train(graph, single, 0);
  const std::vector<double> expected = train_losses(single.metrics);
  ASSERT_EQ(expected.size(), 6u);
  for (int replicas : {2, 4}) {
    SCOPED_TRACE(std::to_string(replicas) + " replicas");
    const TrainConfig c = with_metrics("dp" + std::to_string(replicas));
    const TrainSummary summary = train(graph, c, replicas);
    expect_near_all(train_losses(c.metrics), expected, 1e-5);
    ASSERT_EQ(summary.eval.samples, reference.eval.samples);  // every test sample once
    EXPECT_NEAR(summary.eval.loss, reference.eval.loss, 1e-5 * std::abs(reference.eval.loss));
    EXPECT_DOUBLE_EQ(summary.eval.top1, reference.eval.top1);
  }
}

TEST_F(DataParallelTrainer, CheckpointsResumeAcrossReplicaCounts) {
  const Graph graph = image_mlp();
  config_.eval_every = 0;
  const TrainConfig reference = with_metrics("reference");
  train(graph, reference, 2);
  const std::vector<double> expected = train_losses(reference.metrics);
  ASSERT_EQ(expected.size(), 6u);

  TrainConfig dp = config_, single = config_;
  dp.checkpoint_dir = (dir_ / "dp").string();
  single.checkpoint_dir = (dir_ / "single").string();
  const fs::path dp_dir = train(graph, dp, 2, 3).checkpoint, single_dir = train(graph, single, 0, 3).checkpoint;
  ASSERT_FALSE(dp_dir.empty());
  for (const char* file : {"model.safetensors", "optimizer.safetensors"}) {
    const SafetensorsFile a((dp_dir / file).string()), b((single_dir / file).string());
    EXPECT_EQ(a.names(), b.names()) << file;  // the single-device format
  }
  // 2 replicas -> 1 device and -> 4 replicas; 1 device -> 2 replicas: each continues the run.
  const auto check_continuation = [&](TrainConfig c, int replicas, const std::string& name) {
    SCOPED_TRACE(name);
    c.resume = true;
    c.metrics = (dir_ / (name + ".jsonl")).string();
    EXPECT_EQ(train(graph, c, replicas).steps, 6);
    const std::vector<double> losses = train_losses(c.metrics);
    expect_near_all(losses, {expected.begin() + 3, expected.end()}, 1e-5);
  };
  TrainConfig dp_copy = dp;
  dp_copy.checkpoint_dir = (dir_ / "dp-copy").string();
  fs::copy(dp.checkpoint_dir, dp_copy.checkpoint_dir, fs::copy_options::recursive);
  check_continuation(dp, 0, "2-replicas-to-1-device");
  check_continuation(dp_copy, 4, "2-replicas-to-4");
  check_continuation(single, 2, "1-device-to-2-replicas");
}

TEST_F(DataParallelTrainer, ResumedRunWithBatchNormEqualsTheUninterruptedOneBitForBit) {
  const Graph graph = trainer_bn_cnn();
  const TrainConfig whole = with_metrics("whole");
  const TrainSummary uninterrupted = train(graph, whole, 2);
  TrainConfig first = with_metrics("resumed");
  first.checkpoint_dir = (dir_ / "ckpt").string();
  const TrainSummary stopped = train(graph, first, 2, 3);
  ASSERT_TRUE(stopped.interrupted);
  TrainConfig second = first;
  second.resume = true;
  const TrainSummary resumed = train(graph, second, 2);
  EXPECT_EQ(resumed.steps, 6);
  EXPECT_EQ(train_losses(first.metrics), train_losses(whole.metrics));  // bitwise
  EXPECT_EQ(resumed.eval.loss, uninterrupted.eval.loss);
}

TEST(DataParallelConfig, BadSettingsAreOneClearError) {
  TrainConfig config;
  config.batch_size = 6;
  ParallelConfig p;
  p.data_parallel = 4;
  EXPECT_NE(baton::testing::error_message([&] {
              check_data_parallel_config(p, config);
            }).find("--batch-size 6 is the global batch and must split evenly over the 4 replicas"),
            std::string::npos);
  p.data_parallel = 2;
  p.stages = 2;
  EXPECT_NE(baton::testing::error_message([&] { check_data_parallel_config(p, config); }).find("hybrid"),
            std::string::npos);
  p.stages = 0;
  EXPECT_NE(baton::testing::error_message([&] {
              p.update_from_json({{"unused_parameters", "maybe"}}, "run.json");
            }).find("'maybe'"),
            std::string::npos);
  p.unused_parameters = UnusedParameters::ready;
  p.devices = "cpu:0";
  EXPECT_NE(baton::testing::error_message([&] {
              data_parallel_devices(p, config);
            }).find("--devices lists 1 device(s) for 2 data-parallel replicas"),
            std::string::npos);
  p.devices = "cpu:0,cpu:3";
  EXPECT_EQ(data_parallel_devices(p, config), (std::vector<Device>{Device::cpu(0), Device::cpu(3)}));
}

}  // namespace
}  // namespace baton::parallel
