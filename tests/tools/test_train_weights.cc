// `baton train --weights FILE` (or a config file's "weights"): fine-tuning from a safetensors file of
// torchvision names starts at step 0 with the file's parameters, on one device or as a pipeline;
// a file of f64 weights is converted to the f32 model; --weights with --resume, and a file that is
// not there, are clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/elementwise.h"
#include "runtime/core/context.h"
#include "runtime/train/safetensors.h"
#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOneStep =
    "train --model resnet20 --data synthetic:3x32x32:10:64 --device cpu --workers 1 --batch-size 8 --steps 1 "
    "--eval-every 0";
// A learning rate of 0: the step leaves every parameter as the run started with it.
constexpr const char* kFrozen = " --lr-schedule constant --lr 0 --seed 5";

class TrainWeights : public CliTest {
 protected:
  // A resnet20 checkpoint's model.safetensors: a weights file with torchvision names.
  std::string make_weights() {
    const CliResult r = run_baton(std::string(kOneStep) + " --checkpoint-dir " + (dir_ / "source").string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return (dir_ / "source" / "step-00000001" / "model.safetensors").string();
  }

  // Every parameter (".weight", ".bias") of `weights` equals the one in the run's checkpoint.
  static void expect_parameters_equal(const std::string& weights, const fs::path& checkpoint) {
    Context ctx(Device::cpu());
    const SafetensorsFile expected(weights), actual((checkpoint / "model.safetensors").string());
    int compared = 0;
    for (const std::string& name : expected.names()) {
      if (!name.ends_with(".weight") && !name.ends_with(".bias")) continue;  // running statistics move in a step
      ASSERT_TRUE(actual.contains(name)) << name;
      EXPECT_EQ(expected.read(name, ctx.stream()).to_vector<float>(ctx.stream()),
                actual.read(name, ctx.stream()).to_vector<float>(ctx.stream()))
          << name;
      ++compared;
    }
    EXPECT_GT(compared, 40);  // resnet20: 21 convolutions, 19 batch norms, fc
  }
};

TEST_F(TrainWeights, ARunStartsAtStepZeroFromTheFileOnOneDeviceAndAsAPipeline) {
  const std::string weights = make_weights();
  const CliResult single = run_baton(std::string(kOneStep) + kFrozen + " --weights " + weights + " --checkpoint-dir " +
                                     (dir_ / "single").string());
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_NE(single.out.find("weights from " + weights + ", starting at step 0"), std::string::npos) << single.out;
  expect_parameters_equal(weights, dir_ / "single" / "step-00000001");

  // The config file's "weights" field, pipelined over cpu:0 and cpu:1.
  const fs::path config = dir_ / "run.json";
  std::ofstream(config) << R"({"weights": ")" << weights << R"(", "parallel": {"stages": 2, "micro_batches": 2}})";
  const CliResult piped = run_baton(std::string(kOneStep) + kFrozen + " --config " + config.string() +
                                    " --checkpoint-dir " + (dir_ / "piped").string());
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  expect_parameters_equal(weights, dir_ / "piped" / "step-00000001");

  // The control: without the file the run starts from its seed's weights.
  const CliResult seeded =
      run_baton(std::string(kOneStep) + kFrozen + " --checkpoint-dir " + (dir_ / "seeded").string());
  ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
  Context ctx(Device::cpu());
  const SafetensorsFile file(weights), seeded_file((dir_ / "seeded" / "step-00000001" / "model.safetensors").string());
  EXPECT_NE(file.read("conv1.weight", ctx.stream()).to_vector<float>(ctx.stream()),
            seeded_file.read("conv1.weight", ctx.stream()).to_vector<float>(ctx.stream()));
}

TEST_F(TrainWeights, Float64WeightsAreConvertedToTheFloat32Model) {
  const std::string weights = make_weights();
  // The same weights as f64 (the I64 counters as they are): f32 -> f64 -> f32 is exact.
  Context ctx(Device::cpu());
  const SafetensorsFile source(weights);
  NamedTensors wide;
  for (const std::string& name : source.names()) {
    const Tensor t = source.read(name, ctx.stream());
    if (t.dtype() != DType::f32) {
      wide.emplace_back(name, t);
      continue;
    }
    Tensor w = Tensor::empty(t.shape(), DType::f64, ctx);
    kernels::cast(ctx, t, w);
    wide.emplace_back(name, w);
  }
  const std::string wide_file = (dir_ / "wide.safetensors").string();
  save_safetensors(wide_file, wide, {}, ctx.stream());
  ASSERT_EQ(SafetensorsFile(wide_file).info("conv1.weight").dtype, DType::f64);

  const CliResult single = run_baton(std::string(kOneStep) + kFrozen + " --weights " + wide_file +
                                     " --checkpoint-dir " + (dir_ / "single").string());
  ASSERT_EQ(single.exit_code, 0) << single.err;
  expect_parameters_equal(weights, dir_ / "single" / "step-00000001");
  const CliResult piped = run_baton(std::string(kOneStep) + kFrozen + " --weights " + wide_file +
                                    " --stages 2 --micro-batches 2 --checkpoint-dir " + (dir_ / "piped").string());
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  expect_parameters_equal(weights, dir_ / "piped" / "step-00000001");
}

TEST_F(TrainWeights, WeightsWithResumeOrAMissingFileAreClearErrors) {
  const CliResult both =
      run_baton(std::string(kOneStep) + " --weights w.safetensors --resume " + (dir_ / "runs").string());
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.err.find("weights (--weights) start a new run from a file and resume (--resume) continues a "
                          "checkpoint; give one, not both"),
            std::string::npos)
      << both.err;
  EXPECT_EQ(std::count(both.err.begin(), both.err.end(), '\n'), 1) << both.err;

  const std::string missing = (dir_ / "missing.safetensors").string();
  const CliResult absent = run_baton(std::string(kOneStep) + " --weights " + missing);
  EXPECT_EQ(absent.exit_code, 1);
  EXPECT_NE(absent.err.find(missing), std::string::npos) << absent.err;
}

}  // namespace
}  // namespace baton::cli
