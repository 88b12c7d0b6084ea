// The trainer: a run stopped and resumed from its checkpoint continues exactly (bit for bit on the
// CPU), metrics lines are written, the interrupted run leaves a checkpoint, bad configs are errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "layers/graph_builder.h"
#include "runtime/core/error.h"
#include "runtime/data/dataset.h"
#include "runtime/train/trainer.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/train_metrics.h"

namespace baton {
namespace {

Graph tiny_cnn(int64_t batch, int64_t classes) {
  layers::GraphBuilder g;
  const ValueId x = g.input("x", Shape{batch, 3, 32, 32});
  const ValueId labels = g.input("labels", Shape{batch}, DType::i64);
  ValueId y = g.conv2d(x, {.out_channels = 4, .kernel = 3, .stride = 2, .padding = 1, .bias = false}, "conv1");
  y = g.relu(g.batch_norm2d(y, {}, "bn1"), "relu");
  y = g.flatten(g.adaptive_avg_pool2d(y, "pool"), "flatten");
  y = g.dropout(y, 0.1, "dropout");
  const ValueId logits = g.linear(y, classes, "fc");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

using testing::train_losses;


TEST(Trainer, ResumedRunEqualsAnUninterruptedRunBitForBit) {
  testing::ScratchDir dir("trainer_resume");
  const std::unique_ptr<data::Dataset> train = data::open_dataset("shapes", data::Split::train, 3);
  const Graph graph = tiny_cnn(8, train->num_classes());
  TrainConfig config;
  config.steps = 6;
  config.batch_size = 8;
  config.log_every = 1;
  config.eval_every = 0;
  config.workers = 2;
  config.seed = 3;
  config.lr_schedule = {{"type", "cosine"}, {"base_lr", 0.05}};

  TrainConfig whole = config;
  whole.metrics = (dir.path() / "whole.jsonl").string();
  Trainer(graph, whole, *train, nullptr, Device::cpu()).run(nullptr);

  TrainConfig first = config;
  first.metrics = (dir.path() / "resumed.jsonl").string();
  first.checkpoint_dir = (dir.path() / "ckpt").string();
  int calls = 0;
  const TrainSummary stopped =
      Trainer(graph, first, *train, nullptr, Device::cpu()).run([&] { return ++calls == 3; });
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.steps, 3);
  ASSERT_FALSE(stopped.checkpoint.empty());

  TrainConfig second = first;
  second.resume = true;
  const TrainSummary resumed = Trainer(graph, second, *train, nullptr, Device::cpu()).run(nullptr);
  EXPECT_EQ(resumed.steps, 6);
  const std::vector<double> a = train_losses(dir.path() / "whole.jsonl"), b = train_losses(dir.path() / "resumed.jsonl");
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a, b);  // bitwise: every loss of the resumed run equals the uninterrupted one
}

TEST(Trainer, BadConfigIsAnErrorNamingTheField) {
  TrainConfig config;
  EXPECT_THROW(config.update_from_json({{"epoch", 3}}, "run.json"), Error);
  EXPECT_THROW(config.update_from_json({{"batch_size", "big"}}, "run.json"), Error);
  config.batch_size = 0;
  try {
    config.validate("run.json");
    FAIL() << "batch_size 0 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run.json: batch_size must be >= 1"), std::string::npos) << e.what();
  }
  TrainConfig resume_without_dir;
  resume_without_dir.resume = true;
  EXPECT_THROW(resume_without_dir.validate("cli"), Error);
}

}  // namespace
}  // namespace baton
