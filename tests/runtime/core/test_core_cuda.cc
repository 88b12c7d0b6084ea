// Core runtime on CUDA devices: pool allocator and statistics, OOM message, streams and events,
// copies host<->device, device<->device and peer, fill, contexts. Skipped without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "runtime/core/context.h"
#include "runtime/core/memory_stats.h"
#include "runtime/core/tensor.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

TEST(CudaAllocator, PoolAllocationsAreCountedAndCachedAfterFree) {
  BATON_REQUIRE_GPU();
  const Device dev = Device::cuda(0);
  const Stream s = Stream::create(dev);
  s.synchronize();
  reset_peak_memory_stats(dev);
  const MemoryStats before = memory_stats(dev);
  const size_t bytes = size_t{64} << 20;
  {
    Tensor t = Tensor::empty(Shape{static_cast<int64_t>(bytes / 4)}, DType::f32, s);
    EXPECT_EQ(memory_stats(dev).current_bytes, before.current_bytes + bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 256, 0u);
  }
  s.synchronize();
  const MemoryStats after = memory_stats(dev);
  EXPECT_EQ(after.current_bytes, before.current_bytes);
  EXPECT_GE(after.peak_bytes, before.current_bytes + bytes);
  EXPECT_GE(after.cached_bytes, bytes);  // freed memory stays in the pool (release threshold)
  release_cached_memory(dev);
  EXPECT_LT(memory_stats(dev).cached_bytes, bytes);
}

TEST(CudaAllocator, OutOfMemoryStatesRequestInUseAndCached) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cuda(0));
  const MemoryStats before = memory_stats(Device::cuda(0));
  try {
    Tensor t = Tensor::empty(Shape{int64_t{1} << 50}, DType::u8, s);
    FAIL() << "allocated a petabyte";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("out of memory on cuda:0"), std::string::npos) << what;
    EXPECT_NE(what.find("1125899906842624 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("in use by baton"), std::string::npos) << what;
    EXPECT_NE(what.find("cached in the pool"), std::string::npos) << what;
  }
  // The failed request was never counted, so nothing is subtracted for it.
  EXPECT_EQ(memory_stats(Device::cuda(0)).current_bytes, before.current_bytes);
  EXPECT_EQ(memory_stats(Device::cuda(0)).allocations, before.allocations);
  // The device is still usable afterwards.
  Tensor ok = Tensor::empty(Shape{16}, DType::f32, s);
  ok.fill(1.0, s);
  EXPECT_EQ(ok.to_vector<float>(s)[15], 1.0f);
}

TEST(CudaTensor, HostDeviceRoundTripAndDeviceCopies) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cuda(0));
  const Stream cpu = Stream::create(Device::cpu());
  for (int64_t n : {1, 7, 1023, (1 << 20) + 3}) {
    Tensor host = testing::random_tensor(Shape{n}, DType::f32, cpu, static_cast<uint64_t>(n));
    Tensor dev = host.to(Device::cuda(0), s);
    EXPECT_EQ(dev.device(), Device::cuda(0));
    Tensor dev2 = Tensor::empty(Shape{n}, DType::f32, s);
    testing::poison(dev2, s);
    dev2.copy_from(dev, s);  // device to device
    EXPECT_EQ(dev2.to_vector<float>(s), host.to_vector<float>(cpu)) << "n=" << n;
  }
}

TEST(CudaTensor, PinnedStagingCopiesAsynchronously) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cuda(0));
  Tensor pinned = Tensor::empty_host(Shape{4096}, DType::f32, HostMemory::pinned);
  EXPECT_TRUE(pinned.storage()->pinned());
  for (int i = 0; i < 4096; ++i) pinned.data<float>()[i] = static_cast<float>(i);
  Tensor dev = pinned.to(Device::cuda(0), s);
  Tensor back = Tensor::empty_host(Shape{4096}, DType::f32, HostMemory::pinned);
  back.copy_from(dev, s);
  s.synchronize();
  EXPECT_EQ(0, std::memcmp(back.data_ptr(), pinned.data_ptr(), pinned.nbytes()));
}

TEST(CudaTensor, FillEveryDtypeAndUnalignedViews) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cuda(0));
  for (DType d : kAllDTypes) {
    for (int64_t n : {1, 7, 1023, (1 << 20) + 3}) {
      Tensor t = Tensor::empty(Shape{n + 1}, d, s);
      t.fill(5.0, s);
      Tensor view = t.slice(1, n + 1);  // starts one element in: not 16-byte aligned
      view.fill(2.0, s);
      const std::vector<double> v = testing::to_doubles(t, s);
      ASSERT_EQ(v[0], 5.0) << dtype_name(d) << " n=" << n;
      for (size_t i = 1; i < v.size(); ++i) ASSERT_EQ(v[i], 2.0) << dtype_name(d) << " n=" << n << " i=" << i;
    }
  }
}

TEST(CudaTensor, PeerCopyBetweenTwoGpus) {
  BATON_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << cuda_device_count();
  const Stream s0 = Stream::create(Device::cuda(0));
  Tensor a = testing::random_tensor(Shape{1000, 3}, DType::f32, s0, 3);
  Tensor b = a.to(Device::cuda(1), s0);
  EXPECT_EQ(b.device(), Device::cuda(1));
  // b lives on cuda:1: it is read through a stream of its own device, after the copy on s0.
  const Stream s1 = Stream::create(Device::cuda(1));
  Event copied(Device::cuda(0));
  copied.record(s0);
  s1.wait(copied);
  EXPECT_EQ(b.to_vector<float>(s1), a.to_vector<float>(s0));
}

TEST(CudaStream, EventsOrderStreamsAndTimeWork) {
  BATON_REQUIRE_GPU();
  const Device dev = Device::cuda(0);
  const Stream producer = Stream::create(dev);
  const Stream consumer = Stream::create(dev, StreamPriority::high);
  EXPECT_NE(producer.native_handle(), nullptr);
  Tensor big = Tensor::empty(Shape{64 << 20}, DType::f32, producer);
  Event start(dev), done(dev);
  start.record(producer);
  big.fill(3.0, producer);
  done.record(producer);
  consumer.wait(done);  // the consumer's copy sees the filled tensor
  big.record_stream(consumer);
  Tensor copy = Tensor::empty(Shape{64 << 20}, DType::f32, consumer);
  copy.copy_from(big, consumer);
  consumer.synchronize();
  EXPECT_TRUE(done.query());
  EXPECT_GT(start.elapsed_ms(done), 0.0f);
  EXPECT_EQ(copy.to_vector<float>(consumer)[(64 << 20) - 1], 3.0f);
}

TEST(CudaStream, CpuStreamWaitingOnCudaEventBlocksTheHost) {
  BATON_REQUIRE_GPU();
  const Stream gpu = Stream::create(Device::cuda(0));
  const Stream cpu = Stream::create(Device::cpu());
  Tensor t = Tensor::empty(Shape{32 << 20}, DType::f32, gpu);
  t.fill(7.0, gpu);
  Event filled(Device::cuda(0), /*timing=*/false);
  filled.record(gpu);
  cpu.wait(filled);
  EXPECT_TRUE(filled.query());
}

TEST(CudaContext, HandlesAreCreatedOnDemandAndBoundToTheStream) {
  BATON_REQUIRE_GPU();
  Context ctx(Device::cuda(0));
  EXPECT_NE(ctx.cublas(), nullptr);
  EXPECT_EQ(ctx.cublas(), ctx.cublas());
  EXPECT_NE(ctx.cudnn(), nullptr);
  void* w = ctx.workspace(1 << 20);
  EXPECT_NE(w, nullptr);
  EXPECT_EQ(ctx.workspace(1 << 10), w);
  EXPECT_NE(ctx.workspace(4 << 20), nullptr);
  EXPECT_GE(ctx.workspace_bytes(), size_t{4} << 20);
}

TEST(CudaContext, DestroyingAContextKeepsTheThreadsCurrentDevice) {
  BATON_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << cuda_device_count();
  int after = -1;
  std::thread worker([&after] {  // a thread of its own: its current device is only what it sets
    if (cudaSetDevice(0) != cudaSuccess) return;
    {
      Context ctx(Device::cuda(1));
      ctx.cublas();
      ctx.cudnn();
    }
    if (cudaGetDevice(&after) != cudaSuccess) after = -2;
  });
  worker.join();
  EXPECT_EQ(after, 0) << "~Context left the thread on another device";
}

TEST(CudaStream, PrioritiesLowNormalHighAreDistinctCudaPriorities) {
  BATON_REQUIRE_GPU();
  int least = 0, greatest = 0;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  if (least - greatest < 2) GTEST_SKIP() << "the device has fewer than 3 stream priorities";
  auto cuda_priority = [](StreamPriority p) {
    const Stream s = Stream::create(Device::cuda(0), p);
    int value = 0;
    EXPECT_EQ(cudaStreamGetPriority(static_cast<cudaStream_t>(s.native_handle()), &value), cudaSuccess);
    return value;
  };
  // Numerically lower is higher priority.
  EXPECT_EQ(cuda_priority(StreamPriority::low), least);
  EXPECT_LT(cuda_priority(StreamPriority::normal), cuda_priority(StreamPriority::low));
  EXPECT_LT(cuda_priority(StreamPriority::high), cuda_priority(StreamPriority::normal));
  EXPECT_EQ(cuda_priority(StreamPriority::high), greatest);
}

}  // namespace
}  // namespace baton
