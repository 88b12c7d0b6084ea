// Stream and Event semantics on CPU devices (in order, events complete once recorded, timing).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runtime/core/context.h"
#include "runtime/core/error.h"
#include "runtime/core/stream.h"

namespace baton {
namespace {

TEST(CpuStream, EventsCompleteWhenRecordedAndMeasureHostTime) {
  const Stream s = Stream::create(Device::cpu(1));
  EXPECT_EQ(s.device(), Device::cpu(1));
  EXPECT_EQ(s.native_handle(), nullptr);
  Event start(Device::cpu(1)), stop(Device::cpu(1));
  EXPECT_FALSE(start.recorded());
  EXPECT_TRUE(start.query());  // an unrecorded event counts as complete, as in CUDA
  start.record(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop.record(s);
  EXPECT_TRUE(stop.query());
  EXPECT_TRUE(s.query());
  const float ms = start.elapsed_ms(stop);
  EXPECT_GE(ms, 19.0f);
  EXPECT_LT(ms, 5000.0f);
  s.wait(stop);  // already complete: returns
  s.synchronize();
}

TEST(CpuStream, MisuseIsAnError) {
  const Stream s = Stream::create(Device::cpu(0));
  Event a(Device::cpu(1)), b(Device::cpu(0)), c(Device::cpu(0), /*timing=*/false);
  EXPECT_THROW(a.record(s), Error);      // event and stream on different devices
  EXPECT_THROW(b.elapsed_ms(b), Error);  // not recorded
  b.record(s);
  c.record(s);
  EXPECT_THROW(b.elapsed_ms(c), Error);  // timing disabled
}

TEST(CpuStream, CopiesShareTheStreamAndEventsMove) {
  const Stream s = Stream::create(Device::cpu(), StreamPriority::high);
  const Stream copy = s;
  EXPECT_TRUE(copy == s);
  EXPECT_FALSE(Stream::create(Device::cpu()) == s);
  EXPECT_EQ(copy.priority(), StreamPriority::high);
  Event e(Device::cpu());
  e.record(s);
  Event moved = std::move(e);
  EXPECT_TRUE(moved.recorded());
}

TEST(CpuContext, HasAStreamAndWorkspaceButNoLibraryHandles) {
  Context ctx(Device::cpu(2));
  EXPECT_EQ(ctx.device(), Device::cpu(2));
  void* w = ctx.workspace(1000);
  EXPECT_NE(w, nullptr);
  EXPECT_GE(ctx.workspace_bytes(), 1000u);
  EXPECT_EQ(ctx.workspace(10), w);  // smaller requests reuse the workspace
  EXPECT_THROW(ctx.cublas(), Error);
  EXPECT_THROW(ctx.cudnn(), Error);
}

}  // namespace
}  // namespace baton
