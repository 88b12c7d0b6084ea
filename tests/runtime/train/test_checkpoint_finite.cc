// Non-finite values and checkpoints: a save whose parameters or optimiser state hold a NaN or an
// infinity fails naming the tensor, leaving the earlier checkpoints (retention included) untouched;
// a checkpoint or weights file holding one is refused naming the tensor before anything is copied;
// the NaN and infinity tests of every floating dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>

#include "runtime/train/checkpoint.h"
#include "runtime/train/finite_values.h"
#include "runtime/train/safetensors.h"
#include "tests/runtime/train/checkpoint_test_run.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::CheckpointRun;
using testing::kAdamW;

// Overwrites element `index` of tensor `name` in the safetensors file `path` with `value` (f32).
void poke(const std::string& path, const std::string& name, int64_t index, float value) {
  uint64_t at = 0;
  {
    const SafetensorsFile file(path);
    std::ifstream in(path, std::ios::binary);  // the data section follows the 8 + header bytes
    uint64_t length = 0;
    in.read(reinterpret_cast<char*>(&length), 8);
    at = 8 + length + file.info(name).data_begin + static_cast<uint64_t>(index) * sizeof(float);
  }
  std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
  out.seekp(static_cast<std::streamoff>(at));
  out.write(reinterpret_cast<const char*>(&value), sizeof(value));
}

TEST(CheckpointFinite, ASaveWithANonFiniteValueFailsAndKeepsTheEarlierCheckpoints) {
  testing::ScratchDir dir("ckpt_finite_save");
  CheckpointRun run(kAdamW);
  run.randomize(3);
  const CheckpointManager manager(dir.path().string(), 1);
  const std::string kept = run.save(manager, 5);
  const std::string name = run.params.params().front().name;
  Tensor param = run.params.param(name);
  std::vector<float> values = param.to_vector<float>(run.ctx.stream());
  values[2] = std::numeric_limits<float>::infinity();
  param.copy_from(Tensor::from_vector(values, param.shape(), run.ctx.stream()), run.ctx.stream());
  EXPECT_ERROR_MENTIONS("writing tensor '" + name + "'", run.save(manager, 6));
  EXPECT_ERROR_MENTIONS("it holds inf at element 2 (baton writes only finite values: did training diverge?)",
                        run.save(manager, 6));
  // Retention (keep 1) did not run: step 5 is still there, and nothing else is.
  EXPECT_EQ(manager.list(), std::vector<std::string>{kept});
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(CheckpointFinite, AFileHoldingANonFiniteValueIsRefusedBeforeAnythingIsCopied) {
  testing::ScratchDir dir("ckpt_finite_load");
  CheckpointRun saved(kAdamW);
  saved.randomize(3);
  const CheckpointManager manager(dir.path().string(), 0);
  const std::string path = saved.save(manager, 5);
  const std::string name = saved.params.params().back().name;

  // The optimiser file holds a NaN: the model file, read first, is not copied either.
  const std::string optimizer_file = (fs::path(path) / kOptimizerFileName).string();
  const std::string state = SafetensorsFile(optimizer_file).names().front();
  poke(optimizer_file, state, 1, std::numeric_limits<float>::quiet_NaN());
  CheckpointRun loaded(kAdamW, /*seed=*/7);
  const auto before = loaded.snapshot();
  EXPECT_ERROR_MENTIONS("tensor '" + state + "' holds NaN at element 1",
                        CheckpointManager::load(path, loaded.params, loaded.optimizer.get(), loaded.ctx));
  EXPECT_EQ(loaded.snapshot(), before);

  const std::string model_file = (fs::path(path) / kModelFileName).string();
  poke(model_file, name, 0, -std::numeric_limits<float>::infinity());
  EXPECT_ERROR_MENTIONS("tensor '" + name + "' holds -inf at element 0",
                        load_weights(model_file, loaded.params, loaded.ctx));
  EXPECT_EQ(loaded.snapshot(), before);
}

TEST(CheckpointFinite, EveryFloatingDtypeTellsNaNFromInfinity) {
  const float f32[] = {1.0f, -0.0f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_EQ(first_non_finite(f32, 3, DType::f32), 2);
  EXPECT_EQ(non_finite_name(f32, 2, DType::f32), "NaN");
  const double f64[] = {std::numeric_limits<double>::max(), -std::numeric_limits<double>::infinity()};
  EXPECT_EQ(first_non_finite(f64, 2, DType::f64), 1);
  EXPECT_EQ(non_finite_name(f64, 1, DType::f64), "-inf");
  const uint16_t f16[] = {0x3C00, 0x7BFF, 0x7C00, 0xFE00};  // 1, 65504, inf, NaN
  EXPECT_EQ(first_non_finite(f16, 2, DType::f16), -1);
  EXPECT_EQ(first_non_finite(f16, 4, DType::f16), 2);
  EXPECT_EQ(non_finite_name(f16, 2, DType::f16), "inf");
  EXPECT_EQ(non_finite_name(f16, 3, DType::f16), "NaN");
  const uint16_t bf16[] = {0x3F80, 0x7F7F, 0xFF80, 0x7FC1};  // 1, max, -inf, NaN
  EXPECT_EQ(first_non_finite(bf16, 4, DType::bf16), 2);
  EXPECT_EQ(non_finite_name(bf16, 2, DType::bf16), "-inf");
  EXPECT_EQ(non_finite_name(bf16, 3, DType::bf16), "NaN");
  const int32_t ints[] = {-1, 0x7F800000};
  EXPECT_EQ(first_non_finite(ints, 2, DType::i32), -1);
}

}  // namespace
}  // namespace baton
