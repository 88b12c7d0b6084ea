// Pipeline executor on one GPU with a stream per stage (stages share the device: no copies, only
// events), on the GPU fed from CPU inputs, and across two GPUs (peer copies) when there are two:
// float32 within 1e-5 relative of the single-device step on cuda:0. Skips with the reason when
// the GPUs are missing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "runtime/core/memory_stats.h"
#include "tests/parallel/pipeline_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::error_message;

constexpr double kTol = 1e-5;

// Pipeline position p on cuda:(p mod gpus).
void expect_equivalent_on_gpu(const Graph& graph, const Plan& plan, ScheduleKind kind, bool recompute,
                              int reference_micro_batches = 1, int gpus = 1) {
  const int chunks = plan.chunks_per_device;
  const Schedule schedule =
      make_schedule(kind, plan.num_stages() / chunks, chunks, plan.micro_batches, consumers_of(graph, plan));
  PipelineOptions options;
  options.dtype = DType::f32;
  options.recompute.assign(static_cast<size_t>(plan.num_stages()), recompute);
  std::vector<Device> devices;
  for (int s = 0; s < schedule.stages; ++s) devices.push_back(Device::cuda(schedule.position_of(s) % gpus));
  PipelineExecutor pipe(graph, plan, schedule, devices, options);
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
  // Micro-batch counts of 1, 2 (as many as or fewer than the stages) and 8 (more): every count runs
  // on the CPU in tests/parallel/test_pipeline_executor.cc; here the streams and events are checked.
  for (int stages : {2, 3, 4}) {
    for (int micro_batches : {1, 2, 8}) {
      for (bool recompute : {false, true}) {
        // Without recomputation: one micro-batch and more than the stages; with it: fewer and more.
        if (micro_batches == 1 && recompute) continue;
        if (micro_batches == 2 && !recompute) continue;
        for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
          const bool interleaved = kind == ScheduleKind::interleaved;
          if (interleaved && stages % 2 != 0) continue;
          SCOPED_TRACE(std::string(schedule_kind_name(kind)) + " S=" + std::to_string(stages) +
                       " M=" + std::to_string(micro_batches) + (recompute ? " recompute" : ""));
          expect_equivalent_on_gpu(graph, even_plan(graph, stages, micro_batches, interleaved ? 2 : 1), kind,
                                   recompute);
        }
      }
    }
  }
}

TEST(PipelineExecutorGpu, SkipTensorsAndDropoutOnOneGpu) {
  BATON_REQUIRE_GPU();
  const Graph skip = skip_model(DType::f32);
  for (const auto& cut : std::vector<std::vector<std::vector<int>>>{
           {{0, 1, 2, 3}, {4, 5, 6, 7, 8}}, {{0, 1}, {2, 3}, {4, 5}, {6, 7, 8}}, {{0}, {1, 2, 3, 4, 5}, {6, 7, 8}}}) {
    for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
      SCOPED_TRACE(std::to_string(cut.size()) + " stages " + std::string(schedule_kind_name(kind)));
      expect_equivalent_on_gpu(skip, plan_from(cut, 4), kind, false);
    }
  }
  const Graph dropout = mlp(DType::f32, true);
  expect_equivalent_on_gpu(dropout, even_plan(dropout, 4, 4), ScheduleKind::one_f_one_b, true, 4);
}

TEST(PipelineExecutorGpu, TwoGpusEqualTheSingleDeviceStep) {
  BATON_REQUIRE_GPU();
  const int gpus = cuda_device_count();
  if (gpus < 2) GTEST_SKIP() << "needs two GPUs for peer copies; this machine has " << gpus;
  std::printf("peer access cuda:0 <-> cuda:1: %s\n",
              enable_peer_access(Device::cuda(0), Device::cuda(1)) ? "on" : "unavailable (copies staged through host)");
  const Graph graph = mlp(DType::f32);
  for (int stages : {2, 4}) {
    for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
      for (bool recompute : {false, true}) {
        const bool interleaved = kind == ScheduleKind::interleaved;
        SCOPED_TRACE(std::string(schedule_kind_name(kind)) + " S=" + std::to_string(stages) +
                     (recompute ? " recompute" : ""));
        expect_equivalent_on_gpu(graph, even_plan(graph, stages, 4, interleaved ? 2 : 1), kind, recompute, 1, 2);
      }
    }
  }
  // Skip tensors between the GPUs: a value of stage 0 read by stages 1 and 2.
  const Graph skip = skip_model(DType::f32);
  expect_equivalent_on_gpu(skip, plan_from({{0, 1}, {2, 3, 4, 5}, {6, 7, 8}}, 4), ScheduleKind::one_f_one_b, false, 1,
                           2);
}

TEST(PipelineExecutorGpu, EvaluateOnStreamsOfOneGpuEqualsTheWholeModel) {
  BATON_REQUIRE_GPU();
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = batch(DType::f32, host.stream(), 5);
  const Graph dropout = mlp(DType::f32, true), skip = skip_model(DType::f32);
  for (const auto& [graph, plan] : std::vector<std::pair<const Graph*, Plan>>{
           {&dropout, even_plan(dropout, 4, 4)}, {&skip, plan_from({{0, 1}, {2, 3, 4, 5}, {6, 7, 8}}, 4)}}) {
    const Schedule schedule =
        make_schedule(ScheduleKind::one_f_one_b, plan.num_stages(), 1, 4, consumers_of(*graph, plan));
    PipelineExecutor pipe(*graph, plan, schedule, stage_devices(schedule, true), {});
    pipe.initialize(11);
    const std::vector<std::vector<double>> got = gathered(pipe.evaluate(inputs));
    const std::vector<std::vector<double>> want = whole_model_eval(*graph, pipe, inputs, Device::cuda(0), DType::f32);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < got.size(); ++o) EXPECT_TRUE(baton::testing::all_close(got[o], want[o], kTol, kTol)) << o;
  }
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
