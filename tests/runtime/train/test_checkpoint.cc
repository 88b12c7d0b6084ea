// Checkpoints: exact round trips (parameters, buffers, optimiser state and steps, metadata), torchvision
// names, resumed training equal to uninterrupted training, and checkpoints of a model in shards (pipeline
// stages) equal to the whole model's. The directory's rules are in test_checkpoint_directory.cc, failed loads
// in test_checkpoint_load.cc.
#include <gtest/gtest.h>

#include <set>

#include "runtime/train/checkpoint.h"
#include "tests/runtime/train/checkpoint_test_run.h"
#include "tests/runtime/train/file_test_support.h"

namespace baton {
namespace {

using testing::CheckpointRun;
using testing::kAdamW;
using testing::kSgd;

TEST(Checkpoint, RoundTripRestoresEveryTensorStepsAndStateBitwise) {
  for (const nlohmann::json& config : {kSgd, kAdamW}) {
    testing::ScratchDir dir("ckpt_roundtrip");
    CheckpointRun saved(config);
    saved.randomize(17);
    const CheckpointManager manager(dir.path().string(), 3);
    const std::string path = saved.save(manager, 1234);
    EXPECT_EQ(path, dir.file("step-00001234"));

    CheckpointRun loaded(config, /*seed=*/99);
    loaded.randomize(5);
    ASSERT_NE(loaded.snapshot(), saved.snapshot());
    const CheckpointState state = CheckpointManager::load(path, loaded.params, loaded.optimizer.get(), loaded.ctx);
    EXPECT_EQ(loaded.snapshot(), saved.snapshot()) << config;
    EXPECT_EQ(loaded.optimizer->steps(), 17);
    const CheckpointState expected = saved.state(1234);
    EXPECT_EQ(state.step, expected.step);
    EXPECT_EQ(state.epoch, expected.epoch);
    EXPECT_EQ(state.seed, expected.seed);
    EXPECT_EQ(state.loader_position, expected.loader_position);
    EXPECT_EQ(state.rng, expected.rng);
    EXPECT_EQ(state.model_spec, expected.model_spec);
    EXPECT_EQ(state.train_config, expected.train_config);
  }
}

// The small CNN's nodes in two shards (the first `split` nodes, the rest), each a ParamStore with
// its own optimiser, as the stages of a pipeline hold them.
struct TwoShards {
  TwoShards(const CheckpointRun& run, const nlohmann::json& config, size_t split)
      : ctx_a(Device::cpu(0)), ctx_b(Device::cpu(1)) {
    const std::vector<NodeId> order = run.graph.topological_order();
    a = std::make_unique<ParamStore>(run.graph, std::vector<NodeId>(order.begin(), order.begin() + split), DType::f32,
                                     ctx_a);
    b = std::make_unique<ParamStore>(run.graph, std::vector<NodeId>(order.begin() + split, order.end()), DType::f32,
                                     ctx_b);
    opt_a = make_optimizer(config, *a, ctx_a, "shard a");
    opt_b = make_optimizer(config, *b, ctx_b, "shard b");
  }
  std::vector<CheckpointShard> shards() { return {{a.get(), opt_a.get(), &ctx_a}, {b.get(), opt_b.get(), &ctx_b}}; }
  Context ctx_a, ctx_b;
  std::unique_ptr<ParamStore> a, b;
  std::unique_ptr<Optimizer> opt_a, opt_b;
};

TEST(Checkpoint, ShardsSaveAndLoadExactlyAsTheWholeModel) {
  for (const nlohmann::json& config : {kSgd, kAdamW}) {
    testing::ScratchDir dir("ckpt_shards");
    CheckpointRun whole(config);
    whole.randomize(23);
    const CheckpointManager manager(dir.path().string(), 0);
    const std::string first = whole.save(manager, 10);

    // Whole -> shards -> whole again: every tensor, the optimiser steps and the state unchanged.
    TwoShards split(whole, config, 3);
    ASSERT_FALSE(split.a->params().empty());
    ASSERT_FALSE(split.b->params().empty());
    const CheckpointState state = CheckpointManager::load(first, split.shards());
    EXPECT_EQ(split.opt_a->steps(), 23);
    EXPECT_EQ(split.opt_b->steps(), 23);
    const std::string second = manager.save(split.shards(), state);
    EXPECT_EQ(second, dir.file("step-00000010"));

    CheckpointRun reloaded(config, /*seed=*/99);
    reloaded.randomize(5);
    const CheckpointState again =
        CheckpointManager::load(second, reloaded.params, reloaded.optimizer.get(), reloaded.ctx);
    EXPECT_EQ(reloaded.snapshot(), whole.snapshot()) << config;
    EXPECT_EQ(reloaded.optimizer->steps(), 23);
    EXPECT_EQ(again.model_spec, whole.state(10).model_spec);
  }
}

TEST(Checkpoint, ShardsThatOverlapOrDisagreeAreRefused) {
  testing::ScratchDir dir("ckpt_bad_shards");
  CheckpointRun whole(kSgd);
  const CheckpointManager manager(dir.path().string(), 0);

  // The same nodes in both shards: a tensor with two owners.
  TwoShards overlap(whole, kSgd, whole.graph.topological_order().size());
  overlap.b = std::make_unique<ParamStore>(whole.graph, whole.graph.topological_order(), DType::f32, overlap.ctx_b);
  overlap.opt_b = make_optimizer(kSgd, *overlap.b, overlap.ctx_b, "shard b");
  EXPECT_ERROR_MENTIONS("is also in an earlier shard", manager.save(overlap.shards(), whole.state(1)));

  TwoShards other_config(whole, kSgd, 3);
  other_config.opt_b = make_optimizer(kAdamW, *other_config.b, other_config.ctx_b, "shard b");
  EXPECT_ERROR_MENTIONS("differs from shard 0's", manager.save(other_config.shards(), whole.state(1)));

  TwoShards other_steps(whole, kSgd, 3);
  other_steps.opt_b->set_steps(4);
  EXPECT_ERROR_MENTIONS("has taken 4 steps", manager.save(other_steps.shards(), whole.state(1)));
  EXPECT_TRUE(manager.list().empty());
}

TEST(Checkpoint, Float64StoresRoundTripAndNeverResumeIntoFloat32Stores) {
  testing::ScratchDir dir("ckpt_f64");
  CheckpointRun saved(kAdamW, 1, Device::cpu(), DType::f64);
  saved.randomize(4);
  const std::string path = saved.save(CheckpointManager(dir.path().string(), 1), 2);
  EXPECT_EQ(SafetensorsFile(path + "/model.safetensors").info("fc.weight").dtype, DType::f64);
  CheckpointRun loaded(kAdamW, 2, Device::cpu(), DType::f64);
  CheckpointManager::load(path, loaded.params, loaded.optimizer.get(), loaded.ctx);
  EXPECT_EQ(loaded.snapshot(), saved.snapshot());

  // Differing in dtype alone: one sentence counting the floating tensors of both files (the I64
  // counters match), not a line per tensor.
  CheckpointRun narrow(kAdamW, 3);
  const auto before = narrow.snapshot();
  size_t floating = 0;
  for (const NamedTensors& file : {model_tensors(narrow.params), optimizer_tensors(narrow.params, *narrow.optimizer)}) {
    for (const auto& [name, t] : file) floating += is_floating(t.dtype()) ? 1 : 0;
  }
  const std::string message =
      testing::error_message([&] { CheckpointManager::load(path, narrow.params, narrow.optimizer.get(), narrow.ctx); });
  const std::string sentence = "cannot resume from checkpoint '" + path + "': it holds " + std::to_string(floating) +
                               " tensors as f64 where the model has f32 (resuming restores the exact state, so it "
                               "needs the model's dtype; start from the converted weights of its model.safetensors "
                               "with --weights / load_weights instead)";
  EXPECT_EQ(message.substr(0, sentence.size()), sentence);
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;  // the sentence [file:line] alone
  EXPECT_EQ(narrow.snapshot(), before);
}

TEST(Checkpoint, FilesUseTorchvisionNamesAndPerParameterOptimiserState) {
  testing::ScratchDir dir("ckpt_names");
  CheckpointRun run(kSgd);
  run.randomize(3);
  const std::string path = run.save(CheckpointManager(dir.path().string(), 1), 7);

  const SafetensorsFile model(path + "/model.safetensors");
  const std::set<std::string> names(model.names().begin(), model.names().end());
  const std::set<std::string> expected = {
      "conv1.weight", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var", "bn1.num_batches_tracked",
      "conv2.weight", "bn2.weight", "bn2.bias", "bn2.running_mean", "bn2.running_var", "bn2.num_batches_tracked",
      "fc.weight",    "fc.bias"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(model.info("bn1.num_batches_tracked").dtype, DType::i64);
  EXPECT_EQ(model.info("bn1.num_batches_tracked").shape, Shape{});
  EXPECT_EQ(model.info("conv1.weight").shape, (Shape{8, 3, 3, 3}));
  EXPECT_EQ(model.info("fc.weight").dtype, DType::f32);
  EXPECT_EQ(model.metadata("format"), "baton.checkpoint/1");
  EXPECT_EQ(model.metadata("step"), "7");
  EXPECT_EQ(model.metadata("optimizer_steps"), "3");
  EXPECT_EQ(model.metadata("seed"), "9223372036854775813");
  EXPECT_EQ(nlohmann::json::parse(model.metadata("model_spec")), run.graph.to_json());

  const SafetensorsFile optimizer(path + "/optimizer.safetensors");
  ASSERT_EQ(optimizer.names().size(), run.params.params().size());
  for (const ParamEntry& e : run.params.params()) {
    const std::string name = "momentum." + e.name;
    ASSERT_TRUE(optimizer.contains(name)) << name;
    EXPECT_EQ(optimizer.info(name).shape, e.shape) << name;  // per parameter, no padding
    EXPECT_EQ(testing::bytes_of(optimizer.read(name, run.ctx.stream()), run.ctx.stream()),
              testing::bytes_of(run.optimizer->state()[0].second.slice(e.offset, e.offset + e.shape.numel()),
                                run.ctx.stream()));
  }
  EXPECT_EQ(optimizer.metadata("optimizer"), "sgd");
  EXPECT_EQ(nlohmann::json::parse(optimizer.metadata("optimizer_config")), run.optimizer->config());
}

TEST(Checkpoint, ResumedTrainingMatchesUninterruptedTrainingBitwise) {
  testing::ScratchDir dir("ckpt_resume");
  const CheckpointManager manager(dir.path().string(), 2);
  CheckpointRun straight(kSgd, 5);
  straight.train(0, 3);
  straight.save(manager, 3);
  const std::vector<double> expected_losses = straight.train(3, 2);

  CheckpointRun resumed(kSgd, 6);  // other initial weights: the load must replace them all
  const std::optional<std::string> latest = manager.latest();
  ASSERT_TRUE(latest.has_value());
  const CheckpointState state = CheckpointManager::load(*latest, resumed.params, resumed.optimizer.get(), resumed.ctx);
  EXPECT_EQ(resumed.optimizer->steps(), 3);
  const std::vector<double> losses = resumed.train(static_cast<int>(state.step), 2);
  EXPECT_TRUE(testing::identical_values(losses, expected_losses));
  EXPECT_EQ(resumed.snapshot(), straight.snapshot());
}

}  // namespace
}  // namespace baton
