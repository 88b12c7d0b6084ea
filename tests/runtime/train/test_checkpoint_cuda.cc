// safetensors and checkpoints with CUDA tensors: device data staged through pinned memory in
// pieces, streams of other devices, and checkpoints moving between a GPU and the CPU bitwise.
#include <gtest/gtest.h>

#include "runtime/train/checkpoint.h"
#include "tests/runtime/train/checkpoint_test_run.h"
#include "tests/runtime/train/file_test_support.h"

namespace baton {
namespace {

TEST(SafetensorsCuda, LargeDeviceTensorsRoundTripInPiecesOnAnyStream) {
  BATON_REQUIRE_GPU();
  testing::ScratchDir dir("st_cuda");
  const Stream gpu = Stream::create(Device::cuda(0));
  const Stream cpu = Stream::create(Device::cpu());
  // 12 MB: more than one 8 MiB staging piece, and not a multiple of it.
  const Tensor big = testing::random_tensor(Shape{3'000'001}, DType::f32, gpu, 1);
  const Tensor small = testing::random_tensor(Shape{3, 5}, DType::bf16, gpu, 2);
  const Tensor host = testing::random_tensor(Shape{7}, DType::i64, cpu, 3, -100, 100);
  const std::string on_gpu_stream = dir.file("gpu_stream.safetensors");
  const std::string on_cpu_stream = dir.file("cpu_stream.safetensors");
  save_safetensors(on_gpu_stream, {{"big", big}, {"small", small}, {"host", host}}, {}, gpu);
  save_safetensors(on_cpu_stream, {{"big", big}, {"small", small}, {"host", host}}, {}, cpu);
  EXPECT_EQ(testing::read_file(on_gpu_stream), testing::read_file(on_cpu_stream));

  const SafetensorsFile file(on_gpu_stream);
  for (const auto& [name, original] : NamedTensors{{"big", big}, {"small", small}, {"host", host}}) {
    const std::vector<unsigned char> expected = testing::bytes_of(original, original.device().is_cpu() ? cpu : gpu);
    EXPECT_EQ(testing::bytes_of(file.read(name, cpu), cpu), expected) << name;
    EXPECT_EQ(testing::bytes_of(file.read(name, gpu), gpu), expected) << name;
    // A CUDA destination given with a CPU stream, one element off alignment.
    const Tensor dst = testing::poisoned(original.shape(), original.dtype(), gpu, /*offset=*/true);
    gpu.synchronize();
    file.read_into(name, dst, cpu);
    EXPECT_EQ(testing::bytes_of(dst, gpu), expected) << name;
  }
}

TEST(CheckpointCuda, CheckpointsMoveBetweenGpuAndCpuBitwise) {
  BATON_REQUIRE_GPU();
  testing::ScratchDir dir("ckpt_cuda");
  const CheckpointManager manager(dir.path().string(), 2);
  testing::CheckpointRun gpu_run(testing::kAdamW, 1, Device::cuda(0));
  gpu_run.train(0, 2);
  const std::string from_gpu = gpu_run.save(manager, 2);

  testing::CheckpointRun cpu_run(testing::kAdamW, 7);
  CheckpointManager::load(from_gpu, cpu_run.params, cpu_run.optimizer.get(), cpu_run.ctx);
  EXPECT_EQ(cpu_run.snapshot(), gpu_run.snapshot());
  EXPECT_EQ(cpu_run.optimizer->steps(), 2);

  cpu_run.randomize(3);
  const std::string from_cpu = cpu_run.save(manager, 3);
  testing::CheckpointRun gpu_again(testing::kAdamW, 8, Device::cuda(0));
  CheckpointManager::load(from_cpu, gpu_again.params, gpu_again.optimizer.get(), gpu_again.ctx);
  EXPECT_EQ(gpu_again.snapshot(), cpu_run.snapshot());
}

}  // namespace
}  // namespace baton
