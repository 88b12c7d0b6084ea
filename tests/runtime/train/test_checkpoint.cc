// Checkpoints: exact round trips (parameters, buffers, optimiser state and steps, metadata),
// torchvision names, resumed training equal to uninterrupted training, checkpoints of a model in
// shards (pipeline stages) equal to the whole model's, retention, atomic saves
// that leave earlier checkpoints intact on failure, and loads that report every mismatch at once
// and change nothing.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <set>

#include "runtime/train/checkpoint.h"
#include "tests/runtime/train/checkpoint_test_run.h"
#include "tests/runtime/train/file_test_support.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::CheckpointRun;
using testing::kAdamW;
using testing::kSgd;

std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> names_of(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) out.push_back(fs::path(p).filename().string());
  return out;
}

TEST(Checkpoint, RoundTripRestoresEveryTensorStepsAndStateBitwise) {
  for (const nlohmann::json& config : {kSgd, kAdamW}) {
    testing::ScratchDir dir("ckpt_roundtrip");
    CheckpointRun saved(config);
    saved.randomize(17);
    const CheckpointManager manager(dir.path().string(), 3);
    const std::string path = manager.save(saved.params, *saved.optimizer, saved.state(1234), saved.ctx);
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
    const std::string first = manager.save(whole.params, *whole.optimizer, whole.state(10), whole.ctx);

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
  const std::string path =
      CheckpointManager(dir.path().string(), 1).save(saved.params, *saved.optimizer, saved.state(2), saved.ctx);
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
  const std::string path =
      CheckpointManager(dir.path().string(), 1).save(run.params, *run.optimizer, run.state(7), run.ctx);

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
  manager.save(straight.params, *straight.optimizer, straight.state(3), straight.ctx);
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

TEST(Checkpoint, RetentionKeepsTheNewestAndNeverTheOneJustWritten) {
  testing::ScratchDir dir("ckpt_retention");
  CheckpointRun run(kSgd);
  const CheckpointManager manager(dir.path().string(), 2);
  for (int64_t step : {1, 2, 3, 4}) manager.save(run.params, *run.optimizer, run.state(step), run.ctx);
  EXPECT_EQ(names_of(manager.list()), (std::vector<std::string>{"step-00000003", "step-00000004"}));
  EXPECT_EQ(entries_of(dir.path()), (std::vector<std::string>{"step-00000003", "step-00000004"}));
  // An older step saved after a rollback is kept, with the newest other one.
  manager.save(run.params, *run.optimizer, run.state(2), run.ctx);
  EXPECT_EQ(names_of(manager.list()), (std::vector<std::string>{"step-00000002", "step-00000004"}));

  testing::ScratchDir all("ckpt_retention_all");
  const CheckpointManager keep_all(all.path().string(), 0);
  for (int64_t step : {1, 2, 3}) keep_all.save(run.params, *run.optimizer, run.state(step), run.ctx);
  EXPECT_EQ(keep_all.list().size(), 3u);
  EXPECT_ERROR_MENTIONS("keep_last must be >= 0", CheckpointManager(all.path().string(), -1));
}

TEST(Checkpoint, SavingTheSameStepAgainReplacesItWhole) {
  testing::ScratchDir dir("ckpt_same_step");
  CheckpointRun run(kSgd);
  const CheckpointManager manager(dir.path().string(), 2);
  run.randomize(1);
  manager.save(run.params, *run.optimizer, run.state(5), run.ctx);
  run.randomize(2);
  const std::string path = manager.save(run.params, *run.optimizer, run.state(5), run.ctx);
  EXPECT_EQ(entries_of(dir.path()), std::vector<std::string>{"step-00000005"});
  CheckpointRun loaded(kSgd);
  CheckpointManager::load(path, loaded.params, loaded.optimizer.get(), loaded.ctx);
  EXPECT_EQ(loaded.snapshot(), run.snapshot());
}

TEST(Checkpoint, LatestIgnoresTemporaryAndIncompleteDirectories) {
  testing::ScratchDir dir("ckpt_latest");
  CheckpointRun run(kSgd);
  const CheckpointManager manager(dir.path().string(), 5);
  EXPECT_FALSE(manager.latest().has_value());
  const std::string saved = manager.save(run.params, *run.optimizer, run.state(5), run.ctx);
  // An interrupted save of step 9 (hidden temporary directory, both files already there), a
  // step-10 directory with one file, names that are not checkpoints, and a regular file.
  const fs::path temp = dir.path() / ".step-00000009.tmp-abc123";
  fs::create_directories(temp);
  fs::copy(saved, temp, fs::copy_options::recursive);
  fs::create_directories(dir.path() / "step-00000010");
  fs::copy(saved + "/model.safetensors", dir.path() / "step-00000010");
  fs::create_directories(dir.path() / "step-0000001x");
  fs::copy(saved, dir.path() / "step-0000001x", fs::copy_options::recursive);
  testing::write_file(dir.file("step-00000011"), "not a directory");
  EXPECT_EQ(manager.latest(), saved);
  EXPECT_EQ(manager.list(), std::vector<std::string>{saved});
}

// Limits the size of files this process writes (RLIMIT_FSIZE, with SIGXFSZ ignored so writes fail
// with EFBIG instead): a disk that fills up in the middle of a save.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &old_limit_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_limit_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &old_limit_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_limit_{};
  void (*old_handler_)(int) = nullptr;
};

// An optimiser whose state is not laid out like the parameters.
class MisshapenOptimizer final : public Optimizer {
 public:
  std::string_view type() const override { return "misshapen"; }
  void step(Context& /*ctx*/, double /*lr*/) override {}
  std::vector<std::pair<std::string, Tensor>> state() const override {
    return {{"m", Tensor::empty_host(Shape{3}, DType::f32)}};
  }
  nlohmann::json config() const override { return nlohmann::json::object(); }
};

TEST(Checkpoint, FailedSavesLeaveEarlierCheckpointsIntactAndNoLeftovers) {
  testing::ScratchDir dir("ckpt_failed_save");
  CheckpointRun run(kSgd);
  run.randomize(1);
  const CheckpointManager manager(dir.path().string(), 1);
  const std::string first = manager.save(run.params, *run.optimizer, run.state(1), run.ctx);
  const std::string model_bytes = testing::read_file(first + "/model.safetensors");
  const std::string optimizer_bytes = testing::read_file(first + "/optimizer.safetensors");
  run.randomize(2);
  for (int64_t step : {2, 1}) {  // a new step, and a replacement of the existing one
    std::string message;
    {
      FileSizeLimit limit(600);  // the model file's header alone is larger
      message = testing::error_message([&] { manager.save(run.params, *run.optimizer, run.state(step), run.ctx); });
    }
    EXPECT_NE(message.find("File too large"), std::string::npos) << message;
    EXPECT_NE(message.find(dir.file(step == 2 ? "step-00000002" : "step-00000001")), std::string::npos) << message;
    EXPECT_EQ(entries_of(dir.path()), std::vector<std::string>{"step-00000001"}) << "step " << step;
    EXPECT_EQ(testing::read_file(first + "/model.safetensors"), model_bytes);
    EXPECT_EQ(testing::read_file(first + "/optimizer.safetensors"), optimizer_bytes);
    EXPECT_EQ(manager.latest(), first);
  }
  const MisshapenOptimizer misshapen;
  EXPECT_ERROR_MENTIONS("optimiser state 'm' is not laid out like the parameters",
                        manager.save(run.params, misshapen, run.state(3), run.ctx));
  EXPECT_EQ(entries_of(dir.path()), std::vector<std::string>{"step-00000001"});
  CheckpointRun loaded(kSgd);
  CheckpointManager::load(first, loaded.params, loaded.optimizer.get(), loaded.ctx);
  run.randomize(1);
  EXPECT_EQ(loaded.snapshot(), run.snapshot());
}

TEST(Checkpoint, MismatchedCheckpointReportsEveryProblemAtOnceAndChangesNothing) {
  testing::ScratchDir dir("ckpt_mismatch");
  CheckpointRun source(kSgd);
  source.randomize(1);
  const std::string path =
      CheckpointManager(dir.path().string(), 1).save(source.params, *source.optimizer, source.state(4), source.ctx);
  // Rewrite the model file: conv2.weight missing, an extra tensor, fc.weight transposed,
  // bn1.num_batches_tracked as F32.
  const std::string model_path = path + "/model.safetensors";
  const std::map<std::string, std::string> metadata = SafetensorsFile(model_path).metadata();
  NamedTensors tensors;
  const Stream& stream = source.ctx.stream();
  for (const auto& [name, t] : model_tensors(source.params)) {
    if (name == "conv2.weight") continue;
    if (name == "fc.weight") {
      tensors.emplace_back(name, t.reshape(Shape{16, 4}));
    } else if (name == "bn1.num_batches_tracked") {
      tensors.emplace_back(name, testing::random_tensor(Shape{}, DType::f32, stream, 1));
    } else {
      tensors.emplace_back(name, t);
    }
  }
  tensors.emplace_back("extra.weight", testing::random_tensor(Shape{2}, DType::f32, stream, 2));
  save_safetensors(model_path, tensors, metadata, stream);

  CheckpointRun target(kAdamW);  // the optimizer file does not match either
  target.randomize(9);
  const auto before = target.snapshot();
  const std::string message =
      testing::error_message([&] { CheckpointManager::load(path, target.params, target.optimizer.get(), target.ctx); });
  for (const std::string& part :
       {"cannot load checkpoint '" + path + "'", model_path + ": 1 missing tensor(s): conv2.weight",
        model_path + ": 1 unexpected tensor(s): extra.weight",
        model_path + ": tensor 'fc.weight' is F32 [16, 4] in the file, expected F32 [4, 16]",
        model_path + ": tensor 'bn1.num_batches_tracked' is F32 [] in the file, expected I64 []",
        path + "/optimizer.safetensors: the state is of optimiser 'sgd', this run uses 'adamw'",
        path + "/optimizer.safetensors: 16 missing tensor(s): exp_avg.conv1.weight",
        path + "/optimizer.safetensors: 8 unexpected tensor(s): momentum."}) {
    EXPECT_NE(message.find(part), std::string::npos) << "missing: " << part << "\nmessage: " << message;
  }
  EXPECT_EQ(target.snapshot(), before);
  EXPECT_EQ(target.optimizer->steps(), 9);
}

TEST(Checkpoint, BadMetadataNamesTheFileAndTheField) {
  testing::ScratchDir dir("ckpt_metadata");
  CheckpointRun run(kSgd);
  const std::string path =
      CheckpointManager(dir.path().string(), 1).save(run.params, *run.optimizer, run.state(4), run.ctx);
  const std::string model_path = path + "/model.safetensors";
  const std::map<std::string, std::string> good = SafetensorsFile(model_path).metadata();
  const auto rewrite = [&](const std::string& key, const std::string& value) {
    std::map<std::string, std::string> metadata = good;
    metadata[key] = value;
    save_safetensors(model_path, model_tensors(run.params), metadata, run.ctx.stream());
  };
  rewrite("format", "other/2");
  EXPECT_ERROR_MENTIONS(
      "checkpoint file '" + model_path + "': metadata 'format' is \"other/2\", expected \"baton.checkpoint/1\"",
      CheckpointManager::load(path, run.params, run.optimizer.get(), run.ctx));
  rewrite("step", "12x");
  EXPECT_ERROR_MENTIONS("metadata 'step' is \"12x\", expected an integer",
                        CheckpointManager::load(path, run.params, nullptr, run.ctx));
  rewrite("model_spec", "{not json");
  EXPECT_ERROR_MENTIONS("metadata 'model_spec': not valid JSON",
                        CheckpointManager::load(path, run.params, nullptr, run.ctx));
  rewrite("step", "5");  // the optimizer file says 4
  EXPECT_ERROR_MENTIONS("metadata 'step' is 4, the model file's is 5",
                        CheckpointManager::load(path, run.params, run.optimizer.get(), run.ctx));
  EXPECT_ERROR_MENTIONS(dir.file("step-00000099") + "/model.safetensors",
                        CheckpointManager::load(dir.file("step-00000099"), run.params, nullptr, run.ctx));
}

TEST(Checkpoint, LoadWeightsAloneWithOptionallyMissingBuffers) {
  testing::ScratchDir dir("ckpt_weights");
  CheckpointRun source(kSgd);
  source.randomize(1);
  const std::string full = dir.file("full.safetensors");
  save_weights(full, source.params, source.ctx, {{"format", "pt"}});
  CheckpointRun target(kSgd, 2);
  load_weights(full, target.params, target.ctx);
  EXPECT_EQ(testing::bytes_of(target.params.params_flat(), target.ctx.stream()),
            testing::bytes_of(source.params.params_flat(), source.ctx.stream()));
  EXPECT_EQ(testing::bytes_of(target.params.buffer("bn2.running_var"), target.ctx.stream()),
            testing::bytes_of(source.params.buffer("bn2.running_var"), source.ctx.stream()));

  // A state_dict without num_batches_tracked (as some converters write it).
  NamedTensors without_counters = model_tensors(source.params);
  std::erase_if(without_counters, [](const auto& nt) { return nt.first.ends_with(".num_batches_tracked"); });
  const std::string partial = dir.file("partial.safetensors");
  save_safetensors(partial, without_counters, {}, source.ctx.stream());
  CheckpointRun strict(kSgd, 3);
  const auto before = strict.snapshot();
  EXPECT_ERROR_MENTIONS(partial + ": 2 missing tensor(s): bn1.num_batches_tracked, bn2.num_batches_tracked",
                        load_weights(partial, strict.params, strict.ctx));
  EXPECT_EQ(strict.snapshot(), before);
  const std::vector<int64_t> counter =
      strict.params.buffer("bn1.num_batches_tracked").to_vector<int64_t>(strict.ctx.stream());
  load_weights(partial, strict.params, strict.ctx, /*allow_missing_buffers=*/true);
  EXPECT_EQ(testing::bytes_of(strict.params.params_flat(), strict.ctx.stream()),
            testing::bytes_of(source.params.params_flat(), source.ctx.stream()));
  EXPECT_EQ(strict.params.buffer("bn1.num_batches_tracked").to_vector<int64_t>(strict.ctx.stream()), counter);

  // Missing parameters are never allowed.
  std::erase_if(without_counters, [](const auto& nt) { return nt.first == "fc.bias"; });
  save_safetensors(partial, without_counters, {}, source.ctx.stream());
  EXPECT_ERROR_MENTIONS("1 missing tensor(s): fc.bias", load_weights(partial, strict.params, strict.ctx, true));
}

}  // namespace
}  // namespace baton
