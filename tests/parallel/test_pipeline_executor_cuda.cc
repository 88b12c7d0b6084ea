// Pipeline executor on one GPU with a stream per stage (stages share the device: no copies, only
// events) and on the GPU fed from CPU inputs: float32 within 1e-5 relative of the single-device
// step on the same GPU. Skips with the reason when there is no GPU.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/parallel/pipeline_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::error_message;

constexpr double kTol = 1e-5;

void expect_equivalent_on_gpu(const Graph& graph, const Plan& plan, ScheduleKind kind, bool recompute,
                              int reference_micro_batches = 1) {
  const int chunks = plan.chunks_per_device;
  const Schedule schedule = make_schedule(kind, plan.num_stages() / chunks, chunks, plan.micro_batches,
                                          consumers_of(graph, plan));
  PipelineOptions options;
  options.dtype = DType::f32;
  options.recompute.assign(static_cast<size_t>(plan.num_stages()), recompute);
  PipelineExecutor pipe(graph, plan, schedule, stage_devices(schedule, true), options);
  pipe.initialize(11);
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = batch(DType::f32, host.stream(), 5);  // on the host: copied per stage
  const double loss = pipe.step(inputs, {.seed = 99});
  const Stream upload = Stream::create(Device::cuda(0));
  const std::vector<Tensor> on_gpu = {inputs[0].to(Device::cuda(0), upload), inputs[1].to(Device::cuda(0), upload)};
  upload.synchronize();  // the reference reads them on another stream
  const Reference ref = reference_step(graph, Device::cuda(0), DType::f32, on_gpu, 11, 99, reference_micro_batches);
  EXPECT_NEAR(loss, ref.loss, kTol * std::max(1.0, std::abs(ref.loss)));
  EXPECT_TRUE(matches_reference(pipe, ref, kTol, kTol));
}

TEST(PipelineExecutorGpu, StreamsOfOneGpuEqualTheSingleDeviceStep) {
  BATON_REQUIRE_GPU();
  const Graph graph = mlp(DType::f32);
  for (int stages : {2, 3, 4}) {
    for (int micro_batches : {1, 2, 4, 8}) {
      for (bool recompute : {false, true}) {
        for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
          const bool interleaved = kind == ScheduleKind::interleaved;
          if (interleaved && stages % 2 != 0) continue;
          SCOPED_TRACE(std::string(schedule_kind_name(kind)) + " S=" + std::to_string(stages) + " M=" +
                       std::to_string(micro_batches) + (recompute ? " recompute" : ""));
          expect_equivalent_on_gpu(graph, even_plan(graph, stages, micro_batches, interleaved ? 2 : 1), kind, recompute);
        }
      }
    }
  }
}

TEST(PipelineExecutorGpu, SkipTensorsAndDropoutOnOneGpu) {
  BATON_REQUIRE_GPU();
  const Graph skip = skip_model(DType::f32);
  for (const auto& cut : std::vector<std::vector<std::vector<int>>>{{{0, 1, 2, 3}, {4, 5, 6, 7, 8}},
                                                                    {{0, 1}, {2, 3}, {4, 5}, {6, 7, 8}},
                                                                    {{0}, {1, 2, 3, 4, 5}, {6, 7, 8}}}) {
    for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
      SCOPED_TRACE(std::to_string(cut.size()) + " stages " + std::string(schedule_kind_name(kind)));
      expect_equivalent_on_gpu(skip, plan_from(cut, 4), kind, false);
    }
  }
  const Graph dropout = mlp(DType::f32, true);
  expect_equivalent_on_gpu(dropout, even_plan(dropout, 4, 4), ScheduleKind::one_f_one_b, true, 4);
}

TEST(PipelineExecutorGpu, AFailingLayerStopsEveryWorker) {
  BATON_REQUIRE_GPU();
  const Graph graph = mlp(DType::f32, false, 6);
  const Plan plan = even_plan(graph, 4, 4);
  const Schedule schedule = make_schedule(ScheduleKind::one_f_one_b, 4, 1, 4, consumers_of(graph, plan));
  PipelineExecutor pipe(graph, plan, schedule, stage_devices(schedule, true), {});
  pipe.initialize(1);
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = batch(DType::f32, host.stream(), 2);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_message([&] { pipe.step(inputs); });
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  EXPECT_NE(message.find("pipeline stage 2, micro-batch 0"), std::string::npos) << message;
}

}  // namespace
}  // namespace baton::parallel
