// Checkpoint loads that go wrong: a mismatched checkpoint reports every problem at once and changes nothing,
// bad metadata names the file and the field; and weights loaded alone, with optionally missing buffers.
#include <gtest/gtest.h>

#include <map>

#include "runtime/train/checkpoint.h"
#include "tests/runtime/train/checkpoint_test_run.h"
#include "tests/runtime/train/file_test_support.h"

namespace baton {
namespace {

using testing::CheckpointRun;
using testing::kAdamW;
using testing::kSgd;

TEST(Checkpoint, MismatchedCheckpointReportsEveryProblemAtOnceAndChangesNothing) {
  testing::ScratchDir dir("ckpt_mismatch");
  CheckpointRun source(kSgd);
  source.randomize(1);
  const std::string path = source.save(CheckpointManager(dir.path().string(), 1), 4);
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
  const std::string path = run.save(CheckpointManager(dir.path().string(), 1), 4);
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
