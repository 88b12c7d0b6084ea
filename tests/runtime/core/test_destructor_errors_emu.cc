// Errors in destructors on the emulated GPU (BATON_CUDA=EMU builds only): a destructor's failed CUDA
// call (made to fail by destroying the object behind baton's back) is logged and cleared, so the
// next kernel launch does not report it as its own failure.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "runtime/core/tensor.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

// A destructor's failed CUDA call is logged and cleared: the next launch does not report it.
void expect_no_stale_error(const char* what) {
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << what << " left its error as the thread's last error";
  const Stream s = Stream::create(Device::cuda(0));
  Tensor t = Tensor::empty(Shape{300}, DType::f32, s);
  EXPECT_NO_THROW(t.fill(1.0, s)) << "a launch after " << what << " reported its error";
  EXPECT_EQ(t.to_vector<float>(s)[299], 1.0f);
}

TEST(CudaDestructorErrorsEmu, AFailedStreamDestroyIsNotReportedByTheNextLaunch) {
  BATON_REQUIRE_GPU();
  {
    const Stream doomed = Stream::create(Device::cuda(0));
    // Destroyed behind the Stream's back, so that its destructor's cudaStreamDestroy fails.
    ASSERT_EQ(cudaStreamDestroy(static_cast<cudaStream_t>(doomed.native_handle())), cudaSuccess);
  }
  expect_no_stale_error("~StreamState");
}

TEST(CudaDestructorErrorsEmu, AFailedEventDestroyIsNotReportedByTheNextLaunch) {
  BATON_REQUIRE_GPU();
  {
    Event doomed(Device::cuda(0));
    ASSERT_EQ(cudaEventDestroy(static_cast<cudaEvent_t>(doomed.native_handle())), cudaSuccess);
  }
  expect_no_stale_error("~Event");
}

TEST(CudaDestructorErrorsEmu, AFailedPinnedFreeIsNotReportedByTheNextLaunch) {
  BATON_REQUIRE_GPU();
  {
    Tensor pinned = Tensor::empty_host(Shape{64}, DType::f32, HostMemory::pinned);
    ASSERT_TRUE(pinned.storage()->pinned());
    ASSERT_EQ(cudaFreeHost(pinned.data_ptr()), cudaSuccess);
  }
  expect_no_stale_error("~Storage");
}

}  // namespace
}  // namespace baton
