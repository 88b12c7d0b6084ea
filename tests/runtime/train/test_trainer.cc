// The trainer: a run stopped and resumed from its checkpoint continues exactly (bit for bit on the
// CPU), metrics lines are written, the interrupted run leaves a checkpoint, bad configs are errors,
// and a run starts from a weights file at step 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "layers/graph_builder.h"
#include "runtime/core/error.h"
#include "runtime/data/dataset.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/trainer.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"
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

// `steps` steps of 8 shapes images, seed 3, no evaluation.
TrainConfig short_run(int64_t steps) {
  TrainConfig config;
  config.steps = steps;
  config.batch_size = 8;
  config.eval_every = 0;
  config.seed = 3;
  return config;
}

TEST(Trainer, ResumedRunEqualsAnUninterruptedRunBitForBit) {
  testing::ScratchDir dir("trainer_resume");
  const std::unique_ptr<data::Dataset> train = data::open_dataset("shapes", data::Split::train, 3);
  const Graph graph = tiny_cnn(8, train->num_classes());
  TrainConfig config = short_run(6);
  config.log_every = 1;
  config.workers = 2;
  config.lr_schedule = {{"type", "cosine"}, {"base_lr", 0.05}};

  TrainConfig whole = config;
  whole.metrics = (dir.path() / "whole.jsonl").string();
  Trainer(graph, whole, *train, nullptr, Device::cpu()).run(nullptr);

  TrainConfig first = config;
  first.metrics = (dir.path() / "resumed.jsonl").string();
  first.checkpoint_dir = (dir.path() / "ckpt").string();
  int calls = 0;
  const TrainSummary stopped = Trainer(graph, first, *train, nullptr, Device::cpu()).run([&] { return ++calls == 3; });
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.steps, 3);
  ASSERT_FALSE(stopped.checkpoint.empty());

  TrainConfig second = first;
  second.resume = true;
  const TrainSummary resumed = Trainer(graph, second, *train, nullptr, Device::cpu()).run(nullptr);
  EXPECT_EQ(resumed.steps, 6);
  const std::vector<double> a = train_losses(dir.path() / "whole.jsonl"),
                            b = train_losses(dir.path() / "resumed.jsonl");
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

// A weights file of `graph`'s parameters drawn with `seed`; returns their flat bytes.
std::vector<unsigned char> write_weights(const Graph& graph, uint64_t seed, const std::string& path) {
  Context ctx(Device::cpu());
  ParamStore params(graph, graph.topological_order(), DType::f32, ctx);
  params.initialize(ctx, seed);
  save_weights(path, params, ctx);
  return testing::bytes_of(params.params_flat(), ctx.stream());
}

// The flat parameter bytes of a checkpoint of `graph`.
std::vector<unsigned char> checkpoint_params(const Graph& graph, const std::string& checkpoint) {
  Context ctx(Device::cpu());
  ParamStore params(graph, graph.topological_order(), DType::f32, ctx);
  load_weights(checkpoint + "/model.safetensors", params, ctx);
  return testing::bytes_of(params.params_flat(), ctx.stream());
}

TEST(Trainer, WeightsStartTheRunAtStepZeroFromTheFile) {
  testing::ScratchDir dir("trainer_weights");
  const std::unique_ptr<data::Dataset> train = data::open_dataset("shapes", data::Split::train, 3);
  const Graph graph = tiny_cnn(8, train->num_classes());
  const std::string weights = dir.file("weights.safetensors");
  const std::vector<unsigned char> file_params = write_weights(graph, 11, weights);
  TrainConfig config = short_run(1);
  config.workers = 1;
  config.lr_schedule = {{"type", "constant"}, {"base_lr", 0.0}};  // the step leaves the parameters as they start

  TrainConfig from_file = config;
  from_file.weights = weights;
  from_file.checkpoint_dir = dir.file("from_file");
  const TrainSummary s = Trainer(graph, from_file, *train, nullptr, Device::cpu()).run(nullptr);
  EXPECT_EQ(s.steps, 1);
  EXPECT_EQ(std::filesystem::path(s.checkpoint).filename(), "step-00000001");
  EXPECT_EQ(checkpoint_params(graph, s.checkpoint), file_params);
  EXPECT_EQ(SafetensorsFile(s.checkpoint + "/optimizer.safetensors").metadata("optimizer_steps"), "1");  // fresh

  TrainConfig from_seed = config;  // the control: without the file the run starts from the seed's weights
  from_seed.checkpoint_dir = dir.file("from_seed");
  const TrainSummary control = Trainer(graph, from_seed, *train, nullptr, Device::cpu()).run(nullptr);
  EXPECT_NE(checkpoint_params(graph, control.checkpoint), file_params);
}

TEST(Trainer, WeightsWithResumeOrOfAnotherModelAreOneClearError) {
  testing::ScratchDir dir("trainer_bad_weights");
  TrainConfig both;
  both.weights = "w.safetensors";
  both.resume = true;
  both.checkpoint_dir = "runs";
  EXPECT_ERROR_MENTIONS("run.json: weights (--weights) start a new run from a file and resume (--resume) continues",
                        both.validate("run.json"));

  const std::unique_ptr<data::Dataset> train = data::open_dataset("shapes", data::Split::train, 3);
  const std::string other = dir.file("other.safetensors");
  write_weights(tiny_cnn(8, train->num_classes() + 1), 1, other);
  TrainConfig config = short_run(1);
  config.weights = other;
  const Graph graph = tiny_cnn(8, train->num_classes());
  EXPECT_ERROR_MENTIONS(other + ": tensor 'fc.weight'",
                        Trainer(graph, config, *train, nullptr, Device::cpu()).run(nullptr));
}

}  // namespace
}  // namespace baton
