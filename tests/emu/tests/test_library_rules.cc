// The interface the emulated libraries use (baton_emu/runtime_api.h): a library call's work runs in
// stream order with its accesses checked like a kernel's, and a call on a stream of a device that is
// not current aborts.
#include "baton_emu/runtime_api.h"
#include "emu_test_support.h"

namespace emu_test {
namespace {

using LibraryRules = OnDevice0;
using LibraryRulesDeathTest = OnDevice0;

TEST_F(LibraryRules, WorkRunsWithItsAccessesOpen) {
  DeviceBuffer<float> buffer(4);
  buffer.upload({1, 2, 3, 4});
  float sum = 0;
  baton_emu::run_on_stream(nullptr, "test_library_call", {{buffer.get(), 4 * sizeof(float), "x", false}}, [&] {
    for (int i = 0; i < 4; ++i) sum += buffer.get()[i];
  });
  EXPECT_EQ(10.0f, sum);
  EXPECT_EQ(0, baton_emu::stream_device(nullptr, "test"));
  EXPECT_EQ(0, baton_emu::current_device());
}

TEST_F(LibraryRulesDeathTest, CallOnAStreamOfAnotherDeviceAborts) {
  cudaStream_t stream1 = nullptr;
  ASSERT_EQ(cudaSuccess, cudaSetDevice(1));
  ASSERT_EQ(cudaSuccess, cudaStreamCreate(&stream1));
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  EXPECT_EQ(1, baton_emu::stream_device(stream1, "test"));
  EXPECT_DEATH(baton_emu::run_on_stream(stream1, "cublasGemmEx", {}, [] {}),
               "cublasGemmEx: called with stream #[0-9]+ of device 1 while device 0 is current");
}

TEST_F(LibraryRulesDeathTest, AccessPastTheEndOfAnAllocationAborts) {
  DeviceBuffer<float> buffer(4);
  EXPECT_DEATH(
      baton_emu::run_on_stream(nullptr, "cudnnConvolutionForward", {{buffer.get(), 32, "workspace", true}}, [] {}),
      "cudnnConvolutionForward on the legacy default stream of device 0: workspace .* is not usable: it runs "
      "past the end of allocation");
}

TEST_F(LibraryRulesDeathTest, PoolMemoryOfAnotherDeviceWithoutAccessAborts) {
  void* on0 = nullptr;
  ASSERT_EQ(cudaSuccess, cudaMallocAsync(&on0, 64, nullptr));
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  ASSERT_EQ(cudaSuccess, cudaSetDevice(1));
  EXPECT_DEATH(baton_emu::run_on_stream(nullptr, "ncclAllReduce", {{on0, 64, "sendbuff", false}}, [] {}),
               "ncclAllReduce on the legacy default stream of device 1: sendbuff is in allocation .* on device 0 "
               "\\(cudaMallocAsync\\), which device 1 was not granted access to");
}

TEST_F(LibraryRulesDeathTest, HostMemoryAccessAborts) {
  std::vector<float> host(4);
  EXPECT_DEATH(baton_emu::run_on_stream(nullptr, "cublasGemmEx", {{host.data(), 16, "A", false}}, [] {}),
               "cublasGemmEx: A \\(0x[0-9a-f]+\\) is host memory that is neither device memory nor pinned host memory");
}

}  // namespace
}  // namespace emu_test
