// The runtime rules the emulator enforces as CUDA does: launch limits of an H100 and launches on a
// stream of the current device (error codes, not sticky), events recorded on their own device,
// devices and their properties, cudaGetLastError, the count of calls that block the host.
#include "baton_emu/introspection.h"
#include "emu_test_support.h"
#include "kernels.h"

namespace emu_test {
namespace {

using RuntimeRules = OnDevice0;
using RuntimeRulesDeathTest = OnDevice0;

TEST_F(RuntimeRules, TwoH100DevicesByDefault) {
  int count = 0;
  EMU_ASSERT_OK(cudaGetDeviceCount(&count));
  EXPECT_EQ(2, count);
  cudaDeviceProp prop{};
  EMU_ASSERT_OK(cudaGetDeviceProperties(&prop, 1));
  EXPECT_EQ(9, prop.major);
  EXPECT_EQ(132, prop.multiProcessorCount);
  EXPECT_EQ(1024, prop.maxThreadsPerBlock);
  EXPECT_EQ(cudaErrorInvalidDevice, cudaSetDevice(2));
  EXPECT_EQ(cudaErrorInvalidDevice, cudaGetLastError());
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
}

TEST_F(RuntimeRules, BlockAboveTheLimitIsAnInvalidConfigurationAndNotSticky) {
  EXPECT_EQ(cudaErrorInvalidConfiguration, empty_launch(dim3(1), dim3(1025), 0, nullptr));
  EXPECT_EQ(cudaErrorInvalidConfiguration, empty_launch(dim3(1), dim3(32, 32, 2), 0, nullptr));
  EXPECT_EQ(cudaErrorInvalidConfiguration, empty_launch(dim3(1), dim3(1, 1, 65), 0, nullptr));
  EXPECT_EQ(cudaErrorInvalidConfiguration, empty_launch(dim3(1, 65536), dim3(32), 0, nullptr));
  EXPECT_EQ(cudaErrorInvalidConfiguration, empty_launch(dim3(0), dim3(32), 0, nullptr));
  EXPECT_EQ(cudaSuccess, empty_launch(dim3(2, 3, 4), dim3(8, 4, 2), 0, nullptr));
}

TEST_F(RuntimeRules, SharedMemoryAboveTheLimitIsAnInvalidValue) {
  EXPECT_EQ(cudaErrorInvalidValue, empty_launch(dim3(1), dim3(32), (48 << 10) + 1, nullptr));
  EXPECT_EQ(cudaSuccess, empty_launch(dim3(1), dim3(32), 48 << 10, nullptr));
}

TEST_F(RuntimeRules, LaunchOnAStreamOfAnotherDeviceIsAnInvalidResourceHandle) {
  cudaStream_t stream1 = nullptr;
  EMU_ASSERT_OK(cudaSetDevice(1));
  EMU_ASSERT_OK(cudaStreamCreate(&stream1));
  EMU_ASSERT_OK(cudaSetDevice(0));
  EXPECT_EQ(cudaErrorInvalidResourceHandle, empty_launch(dim3(1), dim3(32), 0, stream1));
  EMU_ASSERT_OK(cudaSetDevice(1));
  EXPECT_EQ(cudaSuccess, empty_launch(dim3(1), dim3(32), 0, stream1));
  EMU_ASSERT_OK(cudaStreamDestroy(stream1));
}

TEST_F(RuntimeRules, EventRecordedOnAStreamOfAnotherDeviceIsAnInvalidResourceHandle) {
  cudaEvent_t event = nullptr;
  cudaStream_t stream1 = nullptr;
  EMU_ASSERT_OK(cudaEventCreate(&event));  // device 0
  EMU_ASSERT_OK(cudaSetDevice(1));
  EMU_ASSERT_OK(cudaStreamCreate(&stream1));
  EXPECT_EQ(cudaErrorInvalidResourceHandle, cudaEventRecord(event, stream1));
  EXPECT_EQ(cudaErrorInvalidResourceHandle, cudaPeekAtLastError());
  EXPECT_EQ(cudaErrorInvalidResourceHandle, cudaGetLastError());
  // Waiting on another device's event is allowed.
  EMU_ASSERT_OK(cudaSetDevice(0));
  EMU_ASSERT_OK(cudaEventRecord(event, nullptr));
  EXPECT_EQ(cudaSuccess, cudaStreamWaitEvent(stream1, event, 0));
  EMU_ASSERT_OK(cudaStreamDestroy(stream1));
  EMU_ASSERT_OK(cudaEventDestroy(event));
}

TEST_F(RuntimeRules, ElapsedTimeNeedsTwoRecordedTimingEvents) {
  cudaEvent_t a = nullptr, b = nullptr, untimed = nullptr;
  EMU_ASSERT_OK(cudaEventCreate(&a));
  EMU_ASSERT_OK(cudaEventCreate(&b));
  EMU_ASSERT_OK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  float ms = -1;
  EXPECT_EQ(cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&ms, a, b));
  EMU_ASSERT_OK(cudaEventRecord(a, nullptr));
  EMU_ASSERT_OK(cudaEventRecord(b, nullptr));
  EMU_ASSERT_OK(cudaEventRecord(untimed, nullptr));
  EXPECT_EQ(cudaSuccess, cudaEventElapsedTime(&ms, a, b));
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&ms, a, untimed));
  (void)cudaGetLastError();
  for (cudaEvent_t e : {a, b, untimed}) EMU_ASSERT_OK(cudaEventDestroy(e));
}

TEST_F(RuntimeRules, DestroyedStreamIsRefused) {
  cudaStream_t stream = nullptr;
  EMU_ASSERT_OK(cudaStreamCreate(&stream));
  EMU_ASSERT_OK(cudaStreamDestroy(stream));
  EXPECT_EQ(cudaErrorInvalidResourceHandle, cudaStreamDestroy(stream));
  (void)cudaGetLastError();
}

TEST_F(RuntimeRulesDeathTest, UseOfADestroyedStreamAborts) {
  cudaStream_t stream = nullptr;
  EMU_ASSERT_OK(cudaStreamCreate(&stream));
  EMU_ASSERT_OK(cudaStreamDestroy(stream));
  EXPECT_DEATH(cudaStreamSynchronize(stream), "cudaStreamSynchronize: the stream is not a live stream");
}

TEST(RuntimeSettingsDeathTest, DeviceCountComesFromTheEnvironment) {
  EXPECT_EXIT(
      {
        setenv("BATON_EMU_DEVICES", "3", 1);
        int count = 0;
        std::exit(cudaGetDeviceCount(&count) == cudaSuccess && count == 3 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(RuntimeRules, PriorityRangeIsAnH100s) {
  int least = 1, greatest = 1;
  EMU_ASSERT_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT_EQ(0, least);
  EXPECT_EQ(-5, greatest);
  cudaStream_t stream = nullptr;
  EMU_ASSERT_OK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, -100));
  int priority = 0;
  EMU_ASSERT_OK(cudaStreamGetPriority(stream, &priority));
  EXPECT_EQ(-5, priority);
  EMU_ASSERT_OK(cudaStreamDestroy(stream));
}

TEST_F(RuntimeRules, HostSynchronisationsAreCountedByKind) {
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
  EMU_ASSERT_OK(cudaStreamCreate(&stream));
  EMU_ASSERT_OK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  void* device = nullptr;
  EMU_ASSERT_OK(cudaMalloc(&device, 64));
  int host[16] = {};
  const baton_emu::HostSyncCounts before = baton_emu::host_sync_counts();
  // Asynchronous work and queries do not block the host.
  EMU_ASSERT_OK(cudaMemsetAsync(device, 0, 64, stream));
  EMU_ASSERT_OK(cudaMemcpyAsync(host, device, 64, cudaMemcpyDeviceToHost, stream));
  EMU_ASSERT_OK(cudaEventRecord(event, stream));
  EMU_ASSERT_OK(cudaEventQuery(event));
  EMU_ASSERT_OK(cudaStreamQuery(stream));
  EXPECT_EQ(before.total(), baton_emu::host_sync_counts().total());
  EMU_ASSERT_OK(cudaStreamSynchronize(stream));
  EMU_ASSERT_OK(cudaEventSynchronize(event));
  EMU_ASSERT_OK(cudaDeviceSynchronize());
  EMU_ASSERT_OK(cudaMemcpy(host, device, 64, cudaMemcpyDeviceToHost));
  EMU_ASSERT_OK(cudaMemset(device, 1, 64));
  EMU_ASSERT_OK(cudaFree(device));
  const baton_emu::HostSyncCounts after = baton_emu::host_sync_counts();
  EXPECT_EQ(1u, after.streams - before.streams);
  EXPECT_EQ(1u, after.events - before.events);
  EXPECT_EQ(2u, after.devices - before.devices);  // cudaDeviceSynchronize and cudaFree
  EXPECT_EQ(2u, after.copies - before.copies);
  EXPECT_EQ(6u, after.total() - before.total());
  EMU_ASSERT_OK(cudaEventDestroy(event));
  EMU_ASSERT_OK(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace emu_test
