// The memory rules the emulator enforces: device memory is out of reach of host code, kernel
// pointer arguments must be usable device or pinned memory, pool memory needs access rights on
// other devices, frees must be ordered after every use, allocations after their cudaMallocAsync;
// freed memory faults (or reads poison with BATON_EMU_PROTECT=0); the capacity is BATON_EMU_MEMORY.
#include <cstring>

#include "emu_test_support.h"
#include "kernels.h"

namespace emu_test {
namespace {

using MemoryRules = OnDevice0;
using MemoryRulesDeathTest = OnDevice0;

TEST_F(MemoryRulesDeathTest, HostCodeReadingDeviceMemoryAborts) {
  DeviceBuffer<float> buffer(16);
  EXPECT_DEATH(
      {
        volatile float v = buffer.get()[3];
        (void)v;
      },
      "host code accessed device memory of device 0 at 0x[0-9a-f]+ \\(allocation 0x[0-9a-f]+ of 64 bytes on device 0");
}

TEST_F(MemoryRulesDeathTest, HostPointerAsKernelArgumentAborts) {
  std::vector<float> host(16, 1.0f);
  DeviceBuffer<float> out(16);
  EXPECT_DEATH(copy_kernel(host.data(), out.get(), 16, nullptr),
               "copy_kernel_body launched at .*: argument 0 \\(0x[0-9a-f]+\\) is host memory that is neither device "
               "memory nor pinned host memory");
}

TEST_F(MemoryRules, PinnedHostMemoryIsAValidKernelArgument) {
  float* pinned = nullptr;
  EMU_ASSERT_OK(cudaHostAlloc(reinterpret_cast<void**>(&pinned), 16 * sizeof(float), cudaHostAllocPortable));
  for (int i = 0; i < 16; ++i) pinned[i] = static_cast<float>(i);
  DeviceBuffer<float> out(16);
  EMU_ASSERT_OK(copy_kernel(pinned, out.get(), 16, nullptr));
  EXPECT_EQ(std::vector<float>(pinned, pinned + 16), out.download());
  EMU_ASSERT_OK(cudaFreeHost(pinned));
}

TEST_F(MemoryRulesDeathTest, FreedPointerAsKernelArgumentAborts) {
  float* data = nullptr;
  ASSERT_EQ(cudaSuccess, cudaMallocAsync(reinterpret_cast<void**>(&data), 64, nullptr));
  ASSERT_EQ(cudaSuccess, cudaFreeAsync(data, nullptr));
  DeviceBuffer<float> out(16);
  EXPECT_DEATH(copy_kernel(data, out.get(), 16, nullptr),
               "argument 0 .* is not usable: it points into allocation .* of 64 bytes on device 0 "
               "\\(cudaMallocAsync\\), freed by cudaFreeAsync on the legacy default stream of device 0");
}

TEST_F(MemoryRulesDeathTest, KernelReadingFreedMemoryThroughAHiddenPointerAborts) {
  float* data = nullptr;
  ASSERT_EQ(cudaSuccess, cudaMallocAsync(reinterpret_cast<void**>(&data), 16 * sizeof(float), nullptr));
  ASSERT_EQ(cudaSuccess, cudaFreeAsync(data, nullptr));
  DeviceBuffer<float> out(16);
  // The launch cannot see the pointer inside the struct; the access itself faults.
  EXPECT_DEATH(copy_hidden(Hidden{data}, out.get(), 16, nullptr),
               "a kernel faulted at 0x[0-9a-f]+ in the device memory of device 0 outside every mapped allocation "
               "\\(it points into allocation .* freed by cudaFreeAsync");
}

TEST(MemoryRulesUnprotectedDeathTest, FreedMemoryIsPoisonedWhenNotProtected) {
  EXPECT_EXIT(
      {
        setenv("BATON_EMU_PROTECT", "0", 1);
        float* data = nullptr;
        if (cudaMallocAsync(reinterpret_cast<void**>(&data), 16 * sizeof(float), nullptr) != cudaSuccess) std::exit(2);
        if (cudaMemsetAsync(data, 0, 16 * sizeof(float), nullptr) != cudaSuccess) std::exit(3);
        if (cudaFreeAsync(data, nullptr) != cudaSuccess) std::exit(4);
        DeviceBuffer<float> out(16);
        if (copy_hidden(Hidden{data}, out.get(), 16, nullptr) != cudaSuccess) std::exit(5);
        for (float v : out.download()) {
          uint32_t bits;
          std::memcpy(&bits, &v, 4);
          if (bits != 0xFFFFFFFFu) std::exit(6);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(MemoryRulesDeathTest, PoolMemoryOfAnotherDeviceWithoutAccessAborts) {
  float* on0 = nullptr;
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  ASSERT_EQ(cudaSuccess, cudaMallocAsync(reinterpret_cast<void**>(&on0), 64, nullptr));
  ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(nullptr));
  ASSERT_EQ(cudaSuccess, cudaSetDevice(1));
  float* on1 = nullptr;
  ASSERT_EQ(cudaSuccess, cudaMalloc(reinterpret_cast<void**>(&on1), 64));
  EXPECT_DEATH(copy_kernel(on0, on1, 16, nullptr),
               "argument 0 is in allocation .* on device 0 \\(cudaMallocAsync\\), which device 1 was not granted "
               "access to \\(cudaMemPoolSetAccess on the pool of device 0\\)");
}

TEST_F(MemoryRules, PoolMemoryOfAnotherDeviceWithAccessWorks) {
  float* on0 = nullptr;
  EMU_ASSERT_OK(cudaMallocAsync(reinterpret_cast<void**>(&on0), 64, nullptr));
  EMU_ASSERT_OK(cudaMemsetAsync(on0, 0, 64, nullptr));
  EMU_ASSERT_OK(cudaStreamSynchronize(nullptr));
  cudaMemPool_t pool = nullptr;
  EMU_ASSERT_OK(cudaDeviceGetDefaultMemPool(&pool, 0));
  cudaMemAccessDesc access{};
  access.location.type = cudaMemLocationTypeDevice;
  access.location.id = 1;
  access.flags = cudaMemAccessFlagsProtReadWrite;
  EMU_ASSERT_OK(cudaMemPoolSetAccess(pool, &access, 1));
  EMU_ASSERT_OK(cudaSetDevice(1));
  {
    DeviceBuffer<float> on1(16);
    EMU_ASSERT_OK(copy_kernel(on0, on1.get(), 16, nullptr));
    EXPECT_EQ(std::vector<float>(16, 0.0f), on1.download());
  }
  access.flags = cudaMemAccessFlagsProtNone;
  EMU_ASSERT_OK(cudaSetDevice(0));
  EMU_ASSERT_OK(cudaMemPoolSetAccess(pool, &access, 1));
  EMU_ASSERT_OK(cudaFreeAsync(on0, nullptr));
}

struct TwoStreams {
  cudaStream_t a = nullptr, b = nullptr;
  TwoStreams() {
    if (cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking) != cudaSuccess) std::abort();
    if (cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking) != cudaSuccess) std::abort();
  }
  ~TwoStreams() {
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
  }
};

TEST_F(MemoryRulesDeathTest, FreeOnAnotherStreamWithoutOrderingAborts) {
  TwoStreams s;
  float* data = nullptr;
  DeviceBuffer<float> out(16);
  ASSERT_EQ(cudaSuccess, cudaMallocAsync(reinterpret_cast<void**>(&data), 64, s.a));
  ASSERT_EQ(cudaSuccess, copy_kernel(data, out.get(), 16, s.a));
  EXPECT_DEATH(cudaFreeAsync(data, s.b),
               "cudaFreeAsync on stream #[0-9]+ of device 0 of allocation .*, last used on stream #[0-9]+ by work "
               "this stream is not ordered after");
}

// A 64-byte cudaMallocAsync allocation on `stream` in *data, zeroed and read into `out` by a kernel there.
void allocate_and_use_on(cudaStream_t stream, float** data, DeviceBuffer<float>& out) {
  EMU_ASSERT_OK(cudaMallocAsync(reinterpret_cast<void**>(data), 64, stream));
  EMU_ASSERT_OK(cudaMemsetAsync(*data, 0, 64, stream));
  EMU_ASSERT_OK(copy_kernel(*data, out.get(), 16, stream));
}

TEST_F(MemoryRules, FreeOnAnotherStreamAfterAnEventWaitWorks) {
  TwoStreams s;
  float* data = nullptr;
  DeviceBuffer<float> out(16);
  ASSERT_NO_FATAL_FAILURE(allocate_and_use_on(s.a, &data, out));
  cudaEvent_t used = nullptr;
  EMU_ASSERT_OK(cudaEventCreateWithFlags(&used, cudaEventDisableTiming));
  EMU_ASSERT_OK(cudaEventRecord(used, s.a));
  EMU_ASSERT_OK(cudaStreamWaitEvent(s.b, used, 0));
  EMU_ASSERT_OK(cudaFreeAsync(data, s.b));
  EMU_ASSERT_OK(cudaEventDestroy(used));
}

TEST_F(MemoryRules, FreeOnAnotherStreamAfterHostSynchronisationWorks) {
  TwoStreams s;
  float* data = nullptr;
  DeviceBuffer<float> out(16);
  ASSERT_NO_FATAL_FAILURE(allocate_and_use_on(s.a, &data, out));
  EMU_ASSERT_OK(cudaStreamSynchronize(s.a));
  EMU_ASSERT_OK(cudaFreeAsync(data, s.b));
}

TEST_F(MemoryRulesDeathTest, UseOnAnotherStreamBeforeTheAllocationIsOrderedAborts) {
  TwoStreams s;
  float* data = nullptr;
  DeviceBuffer<float> out(16);
  ASSERT_EQ(cudaSuccess, cudaMallocAsync(reinterpret_cast<void**>(&data), 64, s.a));
  EXPECT_DEATH(copy_kernel(data, out.get(), 16, s.b),
               "argument 0 is in allocation .*, allocated on stream #[0-9]+ and used here before that allocation is "
               "ordered before this stream");
}

TEST_F(MemoryRules, OutOfMemoryIsReportedAndRecoverable) {
  size_t free_bytes = 0, total = 0;
  EMU_ASSERT_OK(cudaMemGetInfo(&free_bytes, &total));
  void* p = nullptr;
  EXPECT_EQ(cudaErrorMemoryAllocation, cudaMallocAsync(&p, total + 1, nullptr));
  EXPECT_EQ(nullptr, p);
  EXPECT_EQ(cudaErrorMemoryAllocation, cudaGetLastError());
  EMU_ASSERT_OK(cudaMallocAsync(&p, 1024, nullptr));
  EMU_ASSERT_OK(cudaFreeAsync(p, nullptr));
}

TEST_F(MemoryRulesDeathTest, CopyPastTheEndOfAnAllocationAborts) {
  DeviceBuffer<float> buffer(4);
  std::vector<float> host(8, 1.0f);
  EXPECT_DEATH(cudaMemcpy(buffer.get(), host.data(), 8 * sizeof(float), cudaMemcpyHostToDevice),
               "cudaMemcpy on the legacy default stream of device 0: the destination .* is not usable: it runs past "
               "the end of allocation");
}

TEST_F(MemoryRules, CopyKindContradictingThePointersIsAnInvalidValue) {
  DeviceBuffer<float> buffer(4);
  std::vector<float> host(4, 1.0f);
  EXPECT_EQ(cudaErrorInvalidValue, cudaMemcpy(buffer.get(), host.data(), 16, cudaMemcpyDeviceToHost));
  EXPECT_EQ(cudaErrorInvalidValue, cudaGetLastError());
}

}  // namespace
}  // namespace emu_test
