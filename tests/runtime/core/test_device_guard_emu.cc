// CudaDeviceGuard on the emulated GPU (BATON_CUDA=EMU builds only): a thread that works on cuda:1
// only never creates a primary context on cuda:0.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "baton_emu/introspection.h"
#include "runtime/core/context.h"
#include "runtime/core/tensor.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

// Work on cuda:1 only: a stream, memory, a kernel, an event, a context with a cuBLAS handle, and
// everything released again.
void work_on_cuda1_only() {
  const Stream s = Stream::create(Device::cuda(1));
  Tensor t = Tensor::empty(Shape{1000}, DType::f32, s);
  t.fill(3.0, s);
  Event done(Device::cuda(1));
  done.record(s);
  done.synchronize();
  Context ctx(s);
  ctx.cublas();
}

// In a fresh process (gtest's threadsafe death-test style re-runs only this test), nothing but
// cuda:1 is used, so cuda:0's primary context must never be created.
TEST(CudaDeviceGuardEmu, WorkOnCuda1CreatesNoPrimaryContextOnCuda0) {
  BATON_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << cuda_device_count();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const bool before = baton_emu::primary_context_active(0);
        work_on_cuda1_only();
        std::thread other(work_on_cuda1_only);  // a second thread that never used cuda:0 either
        other.join();
        std::exit(before ? 2 : (baton_emu::primary_context_active(0) ? 1 : 0));
      },
      ::testing::ExitedWithCode(0), "");
  GTEST_FLAG_SET(death_test_style, "fast");
}

}  // namespace
}  // namespace baton
