// Checkpoint staging on the emulated GPU (BATON_CUDA=EMU builds only): a save or load allocates its
// pinned staging buffers once, not per tensor, and creates no stream per tensor of another device.
#include <gtest/gtest.h>

#include <string>

#include "baton_emu/introspection.h"
#include "runtime/train/checkpoint.h"
#include "tests/runtime/train/checkpoint_test_run.h"
#include "tests/runtime/train/file_test_support.h"

namespace baton {
namespace {

size_t pinned_allocations() { return baton_emu::creation_counts().pinned_allocations; }

TEST(CheckpointStagingEmu, SaveAndLoadAllocatePinnedBuffersOncePerCheckpoint) {
  BATON_REQUIRE_GPU();
  testing::ScratchDir dir("ckpt_emu");
  const CheckpointManager manager(dir.path().string(), 2);
  testing::CheckpointRun run(testing::kAdamW, 1, Device::cuda(0));
  run.randomize(2);
  ASSERT_GT(model_tensors(run.params).size(), 4u);

  size_t before = pinned_allocations();
  const std::string saved = run.save(manager, 2);
  EXPECT_LE(pinned_allocations() - before, 2u) << "pinned staging buffers allocated per tensor on save";

  testing::CheckpointRun loaded(testing::kAdamW, 9, Device::cuda(0));
  before = pinned_allocations();
  CheckpointManager::load(saved, loaded.params, loaded.optimizer.get(), loaded.ctx);
  EXPECT_LE(pinned_allocations() - before, 2u) << "pinned staging buffers allocated per tensor on load";
  EXPECT_EQ(loaded.snapshot(), run.snapshot());
}

TEST(CheckpointStagingEmu, TensorsOfAnotherDeviceShareOneCopyStream) {
  BATON_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << cuda_device_count();
  testing::ScratchDir dir("st_emu");
  const Stream s0 = Stream::create(Device::cuda(0));
  const Stream s1 = Stream::create(Device::cuda(1));
  NamedTensors tensors;
  for (int i = 0; i < 6; ++i) {
    std::string name = "t";
    name += std::to_string(i);
    tensors.emplace_back(name, testing::random_tensor(Shape{100 + i}, DType::f32, s1, static_cast<uint64_t>(i)));
  }
  s1.synchronize();
  const std::string path = dir.file("other_device.safetensors");
  const baton_emu::CreationCounts before = baton_emu::creation_counts();
  save_safetensors(path, tensors, {}, s0);  // tensors on cuda:1, the caller's stream on cuda:0
  const baton_emu::CreationCounts after = baton_emu::creation_counts();
  EXPECT_LE(after.streams - before.streams, 1u) << "a copy stream per tensor";
  EXPECT_LE(after.pinned_allocations - before.pinned_allocations, 2u) << "pinned buffers per tensor";

  const SafetensorsFile file(path);
  for (const auto& [name, original] : tensors) {
    EXPECT_EQ(testing::bytes_of(file.read(name, s1), s1), testing::bytes_of(original, s1)) << name;
  }
}

}  // namespace
}  // namespace baton
