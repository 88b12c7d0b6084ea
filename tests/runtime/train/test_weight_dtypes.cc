// Weights of another floating dtype: load_weights converts them (f64 -> f32 rounds to nearest,
// f32 -> f64, f16 and bf16 -> f32 exactly), while shape, name and integer-dtype differences stay
// errors listed per tensor; resuming a checkpoint whose floating tensors differ in dtype is refused
// (in one sentence when that is the only difference).
#include <gtest/gtest.h>

#include "kernels/elementwise.h"
#include "runtime/train/checkpoint.h"
#include "tests/runtime/train/checkpoint_test_run.h"
#include "tests/runtime/train/file_test_support.h"

namespace baton {
namespace {

using testing::CheckpointRun;
using testing::kAdamW;
using testing::kSgd;

// Every tensor of `params` as doubles, by name.
std::map<std::string, std::vector<double>> values_of(const ParamStore& params, const Context& ctx) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, t] : model_tensors(params)) out[name] = testing::to_doubles(t, ctx.stream());
  return out;
}

// `params`' tensors with the floating ones converted to `dtype` (the integer counters as they are).
NamedTensors converted(const ParamStore& params, DType dtype, Context& ctx) {
  NamedTensors out;
  for (const auto& [name, t] : model_tensors(params)) {
    if (!is_floating(t.dtype())) {
      out.emplace_back(name, t);
      continue;
    }
    Tensor c = Tensor::empty(t.shape(), dtype, ctx);
    kernels::cast(ctx, t, c);
    out.emplace_back(name, c);
  }
  return out;
}

TEST(WeightDTypes, Float64WeightsLoadIntoFloat32ModelsRoundedAndBack) {
  testing::ScratchDir dir("weights_f64");
  CheckpointRun wide(kSgd, 1, Device::cpu(), DType::f64);
  wide.randomize(2);
  const std::string wide_file = dir.file("wide.safetensors");
  save_weights(wide_file, wide.params, wide.ctx);

  CheckpointRun narrow(kSgd, 3);
  load_weights(wide_file, narrow.params, narrow.ctx);
  const auto wide_values = values_of(wide.params, wide.ctx);
  const auto narrow_values = values_of(narrow.params, narrow.ctx);
  ASSERT_EQ(narrow_values.size(), wide_values.size());
  int rounded = 0;
  for (const auto& [name, values] : wide_values) {
    const std::vector<double>& got = narrow_values.at(name);
    ASSERT_EQ(got.size(), values.size()) << name;
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(got[i], static_cast<double>(static_cast<float>(values[i]))) << name << "[" << i << "]";
      rounded += got[i] != values[i] ? 1 : 0;
    }
  }
  EXPECT_GT(rounded, 0);  // the random f64 values are not all f32 values: there was a conversion

  // f32 -> f64 is exact: the f32 model's weights come back bit for bit in an f64 model.
  const std::string narrow_file = dir.file("narrow.safetensors");
  save_weights(narrow_file, narrow.params, narrow.ctx);
  CheckpointRun again(kSgd, 4, Device::cpu(), DType::f64);
  load_weights(narrow_file, again.params, again.ctx);
  EXPECT_EQ(values_of(again.params, again.ctx), narrow_values);
}

TEST(WeightDTypes, HalfAndBFloat16WeightsLoadIntoFloat32Models) {
  for (DType half : {DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(half));
    testing::ScratchDir dir("weights_half");
    CheckpointRun source(kSgd, 1);
    source.randomize(5);
    const NamedTensors halves = converted(source.params, half, source.ctx);
    const std::string file = dir.file("half.safetensors");
    save_safetensors(file, halves, {}, source.ctx.stream());
    EXPECT_EQ(SafetensorsFile(file).info("conv1.weight").dtype, half);

    CheckpointRun target(kSgd, 2);
    load_weights(file, target.params, target.ctx);
    const auto got = values_of(target.params, target.ctx);
    for (const auto& [name, t] : halves) {
      // Every f16 / bf16 value is an f32 value: the load is exact.
      EXPECT_EQ(got.at(name), testing::to_doubles(t, source.ctx.stream())) << name;
    }
  }
}

TEST(WeightDTypes, ShapeNameAndIntegerDifferencesAreStillListedPerTensor) {
  testing::ScratchDir dir("weights_mismatch");
  CheckpointRun source(kSgd, 1, Device::cpu(), DType::f64);
  source.randomize(6);
  NamedTensors tensors;
  for (const auto& [name, t] : model_tensors(source.params)) {
    if (name == "fc.weight") {
      tensors.emplace_back(name, t.reshape(Shape{16, 4}));
    } else if (name == "bn1.num_batches_tracked") {
      tensors.emplace_back(name, testing::random_tensor(Shape{}, DType::f64, source.ctx.stream(), 1));
    } else {
      tensors.emplace_back(name, t);
    }
  }
  const std::string file = dir.file("bad.safetensors");
  save_safetensors(file, tensors, {}, source.ctx.stream());

  CheckpointRun target(kSgd, 2);
  const auto before = target.snapshot();
  const std::string message = testing::error_message([&] { load_weights(file, target.params, target.ctx); });
  EXPECT_NE(message.find(file + ": tensor 'fc.weight' is F64 [16, 4] in the file, expected F32 [4, 16]"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(file + ": tensor 'bn1.num_batches_tracked' is F64 [] in the file, expected I64 []"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("conv1.weight"), std::string::npos) << message;  // converts: not a problem
  EXPECT_EQ(target.snapshot(), before);
}

TEST(WeightDTypes, ResumingWithOtherDifferencesListsTheDTypesAsOneLine) {
  testing::ScratchDir dir("resume_mismatch");
  CheckpointRun saved(kAdamW, 1, Device::cpu(), DType::f64);
  saved.randomize(7);
  const std::string path = saved.save(CheckpointManager(dir.path().string(), 1), 3);
  const std::string model_path = path + "/model.safetensors";
  const std::map<std::string, std::string> metadata = SafetensorsFile(model_path).metadata();
  NamedTensors tensors = model_tensors(saved.params);
  for (auto& [name, t] : tensors) {
    if (name == "fc.weight") t = t.reshape(Shape{16, 4});
  }
  save_safetensors(model_path, tensors, metadata, saved.ctx.stream());

  CheckpointRun target(kAdamW, 2);
  const auto before = target.snapshot();
  const std::string message =
      testing::error_message([&] { CheckpointManager::load(path, target.params, target.optimizer.get(), target.ctx); });
  size_t model_floating = 0, optimizer_floating = 0;
  for (const auto& [name, t] : model_tensors(target.params)) model_floating += is_floating(t.dtype()) ? 1 : 0;
  for (const auto& [name, t] : optimizer_tensors(target.params, *target.optimizer)) {
    optimizer_floating += is_floating(t.dtype()) ? 1 : 0;
  }
  // fc.weight differs in shape too: it has a line of its own.
  const std::vector<std::string> parts = {
      "cannot load checkpoint '" + path + "': it does not match the model",
      model_path + ": tensor 'fc.weight' is F64 [16, 4] in the file, expected F32 [4, 16]",
      model_path + ": " + std::to_string(model_floating - 1) +
          " tensor(s) are f64 in the file where the model has f32 (",
      path + "/optimizer.safetensors: " + std::to_string(optimizer_floating) +
          " tensor(s) are f64 in the file where the model has f32 ("};
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "missing: " << part << "\nmessage: " << message;
  }
  EXPECT_EQ(message.find("tensor 'conv1.weight'"), std::string::npos) << message;  // not one line per tensor
  EXPECT_EQ(target.snapshot(), before);
}

}  // namespace
}  // namespace baton
