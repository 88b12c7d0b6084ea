// Training steps on the emulated GPU (BATON_CUDA=EMU builds only): a step of the single-device engine
// returns without the host waiting for the GPU, its loss is read back with one wait on an event, a
// bad label is reported by the pending loss (or by the step with synchronised checks), and the
// read-back reuses its pinned buffers and events.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "baton_emu/introspection.h"
#include "runtime/train/single_device_engine.h"
#include "tests/runtime/train/small_cnn_run.h"

namespace baton {
namespace {

size_t host_syncs() { return baton_emu::host_sync_counts().total(); }

class PendingLossEmu : public ::testing::Test {
 protected:
  void SetUp() override {
    BATON_REQUIRE_GPU();
    unsetenv("BATON_SYNC_CHECKS");  // deferred checks, whatever the environment says
  }

  // The small CNN's batch `index` (32 images of 3x12x12, 4 classes) on the engine's device, with
  // label `bad_label` at row `bad_row` when bad_row >= 0.
  data::Batch batch(SingleDeviceEngine& engine, int64_t index, int64_t bad_row = -1, int64_t bad_label = 0) {
    Context& ctx = engine.input_context();
    Tensor images = Tensor::empty_host(Shape{testing::kBatch, 3, testing::kSize, testing::kSize}, DType::f32);
    Tensor labels = Tensor::empty_host(Shape{testing::kBatch}, DType::i64);
    testing::make_batch(7, index * testing::kBatch, images, labels);
    if (bad_row >= 0) labels.data<int64_t>()[bad_row] = bad_label;
    data::Batch b = data::image_batch(images.to(ctx.device(), ctx.stream()), labels.to(ctx.device(), ctx.stream()));
    b.index = index;
    ctx.synchronize();
    return b;
  }

  const Graph graph_ = testing::small_cnn();
  const TrainConfig config_;
};

TEST_F(PendingLossEmu, AStepReturnsBeforeTheGpuIsWaitedForAndItsLossMatchesTheCpu) {
  SingleDeviceEngine gpu(graph_, config_, Device::cuda(0));
  SingleDeviceEngine cpu(graph_, config_, Device::cpu());
  gpu.initialize(5);
  cpu.initialize(5);
  // The first step chooses the convolution algorithms by measurement, which waits; later ones do not.
  EXPECT_NEAR(gpu.step(batch(gpu, 0), 1, 0.05).value(), cpu.step(batch(cpu, 0), 1, 0.05).value(), 1e-4);
  for (int64_t i = 1; i <= 3; ++i) {
    const data::Batch b = batch(gpu, i);
    const size_t before = host_syncs();
    PendingLoss loss = gpu.step(b, 1, 0.05);
    EXPECT_EQ(host_syncs() - before, 0u) << "step " << i << " waited for the GPU";
    const double value = loss.value();
    EXPECT_EQ(host_syncs() - before, 1u) << "reading the loss waits once, on its event";
    EXPECT_EQ(loss.value(), value);
    EXPECT_EQ(host_syncs() - before, 1u) << "a resolved loss waits again";
    EXPECT_NEAR(value, cpu.step(batch(cpu, i), 1, 0.05).value(), 1e-4) << "step " << i;
  }
}

TEST_F(PendingLossEmu, ABadLabelIsReportedByThePendingLossOnceAndTheNextStepIsClean) {
  SingleDeviceEngine engine(graph_, config_, Device::cuda(0));
  engine.initialize(5);
  engine.step(batch(engine, 0), 1, 0.05).value();
  const data::Batch bad = batch(engine, 1, 5, 4);
  const size_t before = host_syncs();
  PendingLoss loss = engine.step(bad, 2, 0.05);  // not thrown here
  EXPECT_EQ(host_syncs() - before, 0u);
  const std::string expected =
      "softmax_cross_entropy_forward: argument 'labels' has 1 value(s) outside [0, 4), the first is 4 at row 5";
  EXPECT_ERROR_MENTIONS(expected, loss.value());
  EXPECT_ERROR_MENTIONS(expected, loss.value());  // the same error again
  EXPECT_TRUE(std::isfinite(engine.step(batch(engine, 2), 3, 0.05).value())) << "the failure was reported twice";
}

TEST_F(PendingLossEmu, SynchronisedChecksThrowFromTheStep) {
  SingleDeviceEngine engine(graph_, config_, Device::cuda(0));
  engine.initialize(5);
  engine.input_context().set_sync_checks(true);
  const data::Batch bad = batch(engine, 1, 31, -2);
  EXPECT_ERROR_MENTIONS(
      "softmax_cross_entropy_forward: argument 'labels' has 1 value(s) outside [0, 4), the first is -2 at row 31",
      engine.step(bad, 2, 0.05));
}

TEST_F(PendingLossEmu, ReadBackReusesItsPinnedBuffersAndEvents) {
  SingleDeviceEngine engine(graph_, config_, Device::cuda(0));
  engine.initialize(5);
  const data::Batch b = batch(engine, 0);
  const baton_emu::CreationCounts before = baton_emu::creation_counts();
  PendingLoss previous = engine.step(b, 1, 0.05);
  for (int i = 0; i < 8; ++i) {  // as the trainer reads them: one step late
    PendingLoss next = engine.step(b, 1, 0.05);
    EXPECT_TRUE(std::isfinite(previous.value()));
    previous = std::move(next);
  }
  EXPECT_TRUE(std::isfinite(previous.value()));
  const baton_emu::CreationCounts after = baton_emu::creation_counts();
  EXPECT_LE(after.pinned_allocations - before.pinned_allocations, 2u) << "a pinned buffer per step";
  EXPECT_LE(after.events - before.events, 2u) << "an event per step";
}

}  // namespace
}  // namespace baton
