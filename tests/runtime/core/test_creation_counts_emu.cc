// CUDA objects created by the core on the emulated GPU (BATON_CUDA=EMU builds only): cross-stream
// frees and peer copies reuse events and streams instead of creating new ones each time.
#include <gtest/gtest.h>

#include "baton_emu/introspection.h"
#include "runtime/core/tensor.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

TEST(CudaCreationCountsEmu, CrossStreamFreesReuseEvents) {
  BATON_REQUIRE_GPU();
  const Stream a = Stream::create(Device::cuda(0));
  const Stream b = Stream::create(Device::cuda(0));
  const size_t events_before = baton_emu::creation_counts().events;
  for (int i = 0; i < 8; ++i) {
    Tensor t = testing::random_tensor(Shape{257}, DType::f32, a, static_cast<uint64_t>(i));
    t.record_stream(b);  // freed on a, ordered after b's work
  }
  EXPECT_LE(baton_emu::creation_counts().events - events_before, 1u) << "a new event per cross-stream free";
}

TEST(CudaCreationCountsEmu, PeerCopiesReuseOneStreamPerDevice) {
  BATON_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << cuda_device_count();
  const Stream s0 = Stream::create(Device::cuda(0));
  const Tensor a = testing::random_tensor(Shape{100, 3}, DType::f32, s0, 5);
  const baton_emu::CreationCounts before = baton_emu::creation_counts();
  for (int i = 0; i < 4; ++i) {
    Tensor b = a.to(Device::cuda(1), s0);
    EXPECT_EQ(b.device(), Device::cuda(1));
  }
  s0.synchronize();
  const baton_emu::CreationCounts after = baton_emu::creation_counts();
  EXPECT_LE(after.streams - before.streams, 1u) << "a new stream per peer copy";
  EXPECT_LE(after.events - before.events, 2u) << "new events per peer copy";
}

}  // namespace
}  // namespace baton
