// Checkpoints that prove themselves: checksums over every tensor and the header, impossible values
// refused, the step taken from the metadata (never from a directory's name or through a link), the
// graph compared on resume, and the reader's bounds on a header's tensor count.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "runtime/train/checksum.h"
#include "runtime/train/graph_difference.h"
#include "runtime/train/safetensors_checksums.h"
#include "tests/runtime/train/checkpoint_test_run.h"
#include "tests/runtime/train/file_test_support.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::CheckpointRun;
using testing::kAdamW;
using testing::kSgd;

// The header JSON of a safetensors file and its data section.
struct RawFile {
  nlohmann::json header;
  std::string data;
};

RawFile read_raw(const std::string& path) {
  const std::string bytes = testing::read_file(path);
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  return {nlohmann::json::parse(bytes.substr(8, length)), bytes.substr(8 + length)};
}

void write_raw(const std::string& path, const RawFile& raw) {
  std::string header = raw.header.dump();
  header.append((8 - header.size() % 8) % 8, ' ');
  testing::write_file(path, testing::safetensors_bytes(header, raw.data));
}

// The file as an earlier baton wrote it: no checksums.
void strip_checksums(const std::string& path) {
  RawFile raw = read_raw(path);
  raw.header["__metadata__"].erase(std::string(kTensorChecksumsKey));
  raw.header["__metadata__"].erase(std::string(kHeaderChecksumKey));
  write_raw(path, raw);
}

TEST(Checksum64, DependsOnTheBytesNotOnHowTheyAreSplit) {
  std::string bytes(1000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 3);
  Checksum64 whole;
  whole.update(bytes);
  for (size_t split : {1u, 3u, 7u, 8u, 9u, 500u, 999u}) {
    Checksum64 parts;
    parts.update(std::string_view(bytes).substr(0, split));
    parts.update(std::string_view(bytes).substr(split));
    EXPECT_EQ(parts.digest(), whole.digest()) << split;
  }
  std::string flipped = bytes;
  flipped[500] = static_cast<char>(flipped[500] ^ 0x40);
  Checksum64 other;
  other.update(flipped);
  EXPECT_NE(other.digest(), whole.digest());
  EXPECT_EQ(whole.hex().size(), 16u);
}

TEST(CheckpointProofs, AFlippedBitInTensorDataIsRefusedNamingTheFileAndTheTensor) {
  testing::ScratchDir dir("proof_bitflip");
  CheckpointRun source(kSgd);
  source.randomize(1);
  const std::string path = source.save(CheckpointManager(dir.path().string(), 1), 4);
  const std::string model_path = path + "/model.safetensors";
  RawFile raw = read_raw(model_path);
  const uint64_t begin = raw.header["fc.weight"]["data_offsets"][0];
  raw.data[begin + 2] = static_cast<char>(raw.data[begin + 2] ^ 0x80);  // the lowest exponent bit: still finite
  std::string bytes = testing::read_file(model_path);
  bytes.replace(bytes.size() - raw.data.size(), raw.data.size(), raw.data);
  testing::write_file(model_path, bytes);

  CheckpointRun target(kSgd, 2);
  const auto before = target.snapshot();
  EXPECT_ERROR_MENTIONS("safetensors file '" + model_path + "': tensor 'fc.weight' does not match its checksum",
                        CheckpointManager::load(path, target.params, target.optimizer.get(), target.ctx));
  EXPECT_EQ(target.snapshot(), before);
  // Weights files baton writes carry checksums too.
  const std::string weights = dir.file("w.safetensors");
  save_weights(weights, source.params, source.ctx);
  bytes = testing::read_file(weights);
  bytes[bytes.size() - 2] = static_cast<char>(bytes[bytes.size() - 2] ^ 1);
  testing::write_file(weights, bytes);
  EXPECT_ERROR_MENTIONS("does not match its checksum", load_weights(weights, target.params, target.ctx));
}

TEST(CheckpointProofs, HandEditedMetadataIsRefused) {
  testing::ScratchDir dir("proof_metadata");
  CheckpointRun run(kSgd);
  const std::string path = run.save(CheckpointManager(dir.path().string(), 1), 4);
  const std::string model_path = path + "/model.safetensors";
  std::string bytes = testing::read_file(model_path);
  const size_t at = bytes.find("\\\"lr\\\":0.05");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 11, "\\\"lr\\\":0.07");  // same length: the header stays valid JSON
  testing::write_file(model_path, bytes);
  EXPECT_ERROR_MENTIONS("safetensors file '" + model_path + "': the header does not match its checksum",
                        CheckpointManager::load(path, run.params, nullptr, run.ctx));
  // One checksum without the other is an edit too.
  RawFile raw = read_raw(path + "/optimizer.safetensors");
  raw.header["__metadata__"].erase(std::string(kHeaderChecksumKey));
  write_raw(path + "/optimizer.safetensors", raw);
  EXPECT_ERROR_MENTIONS("has 'checksum.tensors' without 'checksum.header'",
                        SafetensorsFile(path + "/optimizer.safetensors"));
  // The names are reserved.
  EXPECT_ERROR_MENTIONS("metadata 'checksum.header' is reserved",
                        save_safetensors(dir.file("x.safetensors"), {}, {{"checksum.header", "0"}}, run.ctx.stream()));
}

TEST(CheckpointProofs, FilesWithoutChecksumsStillLoad) {
  testing::ScratchDir dir("proof_old");
  CheckpointRun source(kSgd);
  source.randomize(3);
  const std::string path = source.save(CheckpointManager(dir.path().string(), 1), 4);
  strip_checksums(path + "/model.safetensors");
  strip_checksums(path + "/optimizer.safetensors");
  EXPECT_FALSE(SafetensorsFile(path + "/model.safetensors").has_checksums());
  CheckpointRun target(kSgd, 2);
  CheckpointManager::load(path, target.params, target.optimizer.get(), target.ctx);
  EXPECT_EQ(target.snapshot(), source.snapshot());
}

TEST(CheckpointProofs, ImpossibleValuesAreRefusedNamingTheFileAndTheTensor) {
  testing::ScratchDir dir("proof_invariants");
  CheckpointRun run(kAdamW);
  run.randomize(2);
  const std::string path = run.save(CheckpointManager(dir.path().string(), 1), 4);
  const std::string model_path = path + "/model.safetensors";
  const std::map<std::string, std::string> metadata = SafetensorsFile(model_path).metadata();
  const auto rewrite_with = [&](const std::string& name, double value) {
    NamedTensors tensors = model_tensors(run.params);
    for (auto& [n, t] : tensors) {
      if (n == name) t = testing::random_tensor(t.shape(), t.dtype(), run.ctx.stream(), 1, value, value);
    }
    save_safetensors(model_path, tensors, metadata, run.ctx.stream());
  };
  CheckpointRun target(kAdamW, 5);
  const auto before = target.snapshot();
  rewrite_with("bn1.running_var", -5);
  EXPECT_ERROR_MENTIONS("safetensors file '" + model_path + "': tensor 'bn1.running_var' holds a negative value",
                        CheckpointManager::load(path, target.params, target.optimizer.get(), target.ctx));
  rewrite_with("bn1.num_batches_tracked", -1);
  EXPECT_ERROR_MENTIONS("tensor 'bn1.num_batches_tracked' holds a negative value",
                        CheckpointManager::load(path, target.params, target.optimizer.get(), target.ctx));
  EXPECT_EQ(target.snapshot(), before);
  rewrite_with("bn1.running_var", -0.0);  // negative zero is zero
  CheckpointManager::load(path, target.params, nullptr, target.ctx);

  std::map<std::string, std::string> bad_step = metadata;
  bad_step["step"] = "-3";
  save_safetensors(model_path, model_tensors(run.params), bad_step, run.ctx.stream());
  EXPECT_ERROR_MENTIONS("metadata 'step' (-3) and 'epoch' (0) must not be negative",
                        CheckpointManager::load(path, target.params, nullptr, target.ctx));
}

TEST(CheckpointProofs, TheStepComesFromTheMetadataNotTheDirectoryName) {
  testing::ScratchDir dir("proof_step");
  CheckpointRun run(kSgd);
  const CheckpointManager manager(dir.path().string(), 0);
  const std::string path = run.save(manager, 2);
  const std::string renamed = dir.file("step-00000009");
  fs::rename(path, renamed);
  EXPECT_ERROR_MENTIONS("cannot load checkpoint '" + renamed + "': its name says step 9, its metadata",
                        CheckpointManager::load(renamed, run.params, nullptr, run.ctx));
  // A name beyond 18 digits is no checkpoint, and no step needs one.
  fs::rename(renamed, dir.file("step-9223372036854775807"));
  EXPECT_FALSE(manager.latest().has_value());
  EXPECT_ERROR_MENTIONS("cannot save a checkpoint of step 1000000000000000000",
                        run.save(manager, CheckpointManager::kMaxStep + 1));
  // A symbolic link is never followed.
  const std::string real = run.save(manager, 3);
  fs::rename(real, dir.file("elsewhere"));
  fs::create_directory_symlink(dir.file("elsewhere"), real);
  EXPECT_ERROR_MENTIONS("checkpoint directory '" + real + "' is a symbolic link", manager.latest());
  EXPECT_ERROR_MENTIONS("cannot load checkpoint '" + real + "': it is a symbolic link",
                        CheckpointManager::load(real, run.params, nullptr, run.ctx));
}

TEST(CheckpointProofs, AChangedGraphIsNamedByItsFirstDifference) {
  const nlohmann::json stored = {
      {"format", "baton.graph/1"},
      {"layers",
       {{{"name", "fc1"}, {"type", "Linear"}, {"inputs", {"x"}}, {"params", {{"out_features", 4}}}},
        {{"name", "act1"}, {"type", "Relu"}, {"inputs", {"fc1"}}, {"params", nlohmann::json::object()}},
        {{"name", "loss"},
         {"type", "SoftmaxCrossEntropy"},
         {"inputs", {"act1"}},
         {"params", {{"label_smoothing", 0}}}}}},
      {"outputs", {"loss"}}};
  EXPECT_EQ(first_graph_difference(stored, stored), "");
  nlohmann::json now = stored;
  now["layers"][2]["params"]["label_smoothing"] = 0.1;  // a resumed run may change it
  EXPECT_EQ(first_graph_difference(stored, now), "");
  now["layers"][1]["type"] = "Sigmoid";
  EXPECT_EQ(first_graph_difference(stored, now),
            "layer 'act1' (number 2), field 'type': \"Relu\" in the checkpoint, \"Sigmoid\" now");
  now = stored;
  now["layers"][0]["params"]["out_features"] = 8;
  EXPECT_EQ(first_graph_difference(stored, now),
            "layer 'fc1' (number 1), field 'params.out_features': 4 in the checkpoint, 8 now");
  now["layers"].erase(2);
  now["layers"][0]["params"]["out_features"] = 4;
  EXPECT_NE(first_graph_difference(stored, now).find("layer 'loss' (number 3): {"), std::string::npos);
  EXPECT_ERROR_MENTIONS(
      "cannot resume from checkpoint 'ck/step-00000002': its model differs from this run's at "
      "layer 'loss' (number 3)",
      check_same_graph(stored, now, "ck/step-00000002"));
  check_same_graph(nullptr, now, "ck");  // a checkpoint without its graph is not compared
}

TEST(SafetensorsBounds, TooManyTensorsAreRefusedNamingTheCountAndTheBound) {
  testing::ScratchDir dir("proof_count");
  std::string header = "{";
  const size_t count = kSafetensorsMaxTensors + 1;
  header.reserve(count * 10);
  for (size_t i = 0; i < count; ++i) header += (i ? ",\"" : "\"") + std::to_string(i) + "\":0";
  header += "}";
  const std::string path = dir.file("many.safetensors");
  testing::write_file(path, testing::safetensors_bytes(header, ""));
  EXPECT_ERROR_MENTIONS("safetensors file '" + path + "': the header lists 1000001 tensors, more than the limit of " +
                            std::to_string(kSafetensorsMaxTensors),
                        SafetensorsFile{path});
}

}  // namespace
}  // namespace baton
