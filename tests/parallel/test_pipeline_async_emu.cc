// The pipelined trainer on the emulated GPU (BATON_CUDA=EMU builds only): a step returns without the
// host waiting for any stage (the stages wait for the batch through an event, the micro-batch losses
// come back in one asynchronous read), its loss equals the single-device engine's, a bad label is
// reported by the pending loss naming the stage and micro-batch, and Trainer runs log the same
// losses through either engine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "baton_emu/introspection.h"
#include "parallel/pipeline/pipeline_trainer.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/planner.h"
#include "runtime/train/single_device_engine.h"
#include "runtime/train/trainer.h"
#include "tests/parallel/image_mlp.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"
#include "tests/support/train_metrics.h"

namespace baton::parallel {
namespace {

using baton::parallel::testing::image_mlp;

constexpr int64_t kBatch = 8;

size_t host_syncs() { return baton_emu::host_sync_counts().total(); }

class PipelineAsyncEmu : public ::testing::Test {
 protected:
  void SetUp() override {
    BATON_REQUIRE_GPU();
    unsetenv("BATON_SYNC_CHECKS");  // deferred checks, whatever the environment says
    config_.batch_size = kBatch;
  }

  // Two stages, four micro-batches of 2 (1F1B), on `devices`.
  std::unique_ptr<PipelineTrainEngine> engine(std::vector<Device> devices) {
    const Profile profile =
        analytic_profile(graph_, "image_mlp", device_spec_by_name("cpu"), {.batch_sizes = {1, 2, 4, 8}});
    PlanChoice c;
    c.stages = 2;
    c.micro_batches = 4;
    c.schedule = ScheduleKind::one_f_one_b;
    PlanSettings s;
    s.batch = static_cast<int>(kBatch);
    const EvaluatedPlan e = evaluate_plan(c, profile, cluster_by_name("cpu-2"), s);
    return std::make_unique<PipelineTrainEngine>(graph_, config_, e.plan, e.schedule,
                                                 PipelineTrainOptions{.devices = std::move(devices)});
  }

  // A batch written on ctx's stream and not waited for; label `bad_label` at row `bad_row` if >= 0.
  data::Batch batch(Context& ctx, uint64_t seed, int64_t bad_row = -1, int64_t bad_label = 0) {
    std::vector<int64_t> y = {0, 1, 2, 3, 3, 2, 1, 0};
    if (bad_row >= 0) y[static_cast<size_t>(bad_row)] = bad_label;
    data::Batch b =
        data::image_batch(baton::testing::random_tensor(Shape{kBatch, 3, 4, 4}, DType::f32, ctx.stream(), seed),
                          Tensor::from_vector(y, Shape{kBatch}, ctx.stream()));
    return b;
  }

  const Graph graph_ = image_mlp(kBatch, 4, 2, false);
  TrainConfig config_;
};

TEST_F(PipelineAsyncEmu, AStepReturnsBeforeAnyStageIsWaitedForAndMatchesOneDevice) {
  for (const std::vector<Device>& devices :
       {std::vector<Device>{Device::cuda(0), Device::cuda(1)}, std::vector<Device>{Device::cuda(0), Device::cuda(0)}}) {
    SCOPED_TRACE(devices[1].str());
    if (devices[1].index() >= cuda_device_count()) continue;
    const auto pipe = engine(devices);
    SingleDeviceEngine single(graph_, config_, Device::cuda(0));
    pipe->initialize(3);
    single.initialize(3);
    for (uint64_t step = 0; step < 3; ++step) {
      const data::Batch b = batch(pipe->input_context(), step);
      const data::Batch same = batch(single.input_context(), step);
      const size_t before = host_syncs();
      PendingLoss loss = pipe->step(b, step, 0.1);
      EXPECT_EQ(host_syncs() - before, 0u) << "step " << step << " waited for a stage";
      const double value = loss.value();
      EXPECT_EQ(host_syncs() - before, 1u) << "reading the loss waits once, on its event";
      EXPECT_NEAR(value, single.step(same, step, 0.1).value(), 1e-5) << "step " << step;
    }
    ASSERT_EQ(pipe->step_ms().size(), 3u);
    for (double ms : pipe->step_ms()) EXPECT_GE(ms, 0.0);
  }
}

TEST_F(PipelineAsyncEmu, ABadLabelIsReportedByThePendingLossNamingTheMicroBatch) {
  const auto pipe = engine({Device::cuda(0), Device::cuda(0)});
  pipe->initialize(3);
  const data::Batch bad = batch(pipe->input_context(), 1, 5, 4);  // micro-batch 2, its row 1
  PendingLoss loss = pipe->step(bad, 1, 0.1);
  const std::string message = baton::testing::error_message([&] { loss.value(); });
  EXPECT_NE(message.find("softmax_cross_entropy_forward: argument 'labels' has 1 value(s) outside [0, 4), the "
                         "first is 4 at row 1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("in pipeline stage 1, micro-batch 2"), std::string::npos) << message;
  EXPECT_TRUE(std::isfinite(pipe->step(batch(pipe->input_context(), 2), 2, 0.1).value()));
}

TEST_F(PipelineAsyncEmu, TrainerRunsLogTheSameLossesThroughEitherEngine) {
  baton::testing::ScratchDir dir("pipeline_async_emu");
  const std::unique_ptr<data::Dataset> train = data::open_dataset("synthetic:3x4x4:4:64", data::Split::train, 0);
  config_.steps = 5;
  config_.log_every = 1;
  config_.eval_every = 0;
  config_.workers = 1;
  TrainConfig single = config_, piped = config_;
  single.metrics = (dir.path() / "single.jsonl").string();
  piped.metrics = (dir.path() / "piped.jsonl").string();
  Trainer(graph_, single, *train, nullptr, Device::cuda(0)).run(nullptr);
  const auto pipe = engine({Device::cuda(0), Device::cuda(0)});
  Trainer(graph_, piped, *train, nullptr, *pipe).run(nullptr);
  const std::vector<double> a = baton::testing::train_losses(single.metrics),
                            b = baton::testing::train_losses(piped.metrics);
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(b.size(), 5u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * std::abs(a[i])) << "step " << i + 1;
}

}  // namespace
}  // namespace baton::parallel
