// Pipeline executor on CPU virtual devices: the pipelined step equals the single-device step
// (loss, gradients, updated weights) for every schedule, stage count, micro-batch count and with
// recomputation; skip tensors; dropout seeds; errors stop every worker and name stage and
// micro-batch; bad plans and schedules are refused before running.
#include <gtest/gtest.h>

#include <chrono>

#include "parallel/comm/inproc_communicator.h"
#include "tests/parallel/pipeline_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::error_message;

constexpr double kTol = 1e-12;  // float64: equal to rounding (summation order differs)

struct ExecutorCase {
  ScheduleKind kind;
  int stages;
  int micro_batches;
  bool recompute;
};

std::string name_of(const ExecutorCase& c) {
  return std::string(schedule_kind_name(c.kind)) + " S=" + std::to_string(c.stages) +
         " M=" + std::to_string(c.micro_batches) + (c.recompute ? " recompute" : "");
}

// Runs one pipelined step of `graph` under `plan` and compares it with the single-device step.
void expect_pipeline_equivalent(const Graph& graph, const Plan& plan, ScheduleKind kind, bool recompute,
                                const nlohmann::json& optimizer = nullptr, int reference_micro_batches = 1) {
  PipelineOptions options = f64_options(plan.num_stages(), recompute);
  options.optimizer = optimizer;
  const auto pipe = make_pipeline(graph, plan, kind, options, 11);
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = batch(DType::f64, host.stream(), 5);
  const double lr = 0.05;
  const double loss = pipe->step(inputs, {.seed = 99, .lr = lr});
  const Reference ref =
      reference_step(graph, Device::cpu(), DType::f64, inputs, 11, 99, reference_micro_batches, optimizer, lr);
  EXPECT_NEAR(loss, ref.loss, kTol * std::max(1.0, std::abs(ref.loss)));
  EXPECT_TRUE(matches_reference(*pipe, ref, kTol, kTol));
}

TEST(PipelineExecutor, EqualsSingleDeviceForEveryScheduleStageAndMicroBatchCount) {
  const Graph graph = mlp(DType::f64);
  int runs = 0;
  for (int stages : {2, 3, 4}) {
    for (int micro_batches : {1, 2, 4, 8}) {
      for (bool recompute : {false, true}) {
        for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
          const bool interleaved = kind == ScheduleKind::interleaved;
          if (interleaved && stages % 2 != 0) continue;  // two chunks per device
          const ExecutorCase c{kind, stages, micro_batches, recompute};
          SCOPED_TRACE(name_of(c));
          expect_pipeline_equivalent(graph, even_plan(graph, stages, micro_batches, interleaved ? 2 : 1), kind,
                                     recompute);
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, 64);
}

TEST(PipelineExecutor, OptimizerStepUpdatesTheWeightsAsTheSingleDeviceStepDoes) {
  const Graph graph = mlp(DType::f64);
  const nlohmann::json sgd = {{"type", "sgd"}, {"momentum", 0.9}, {"weight_decay", 1e-3}};
  const nlohmann::json adamw = {{"type", "adamw"}};
  for (const auto& optimizer : {sgd, adamw}) {
    SCOPED_TRACE(optimizer.dump());
    expect_pipeline_equivalent(graph, even_plan(graph, 3, 4), ScheduleKind::one_f_one_b, false, optimizer);
  }
}

TEST(PipelineExecutor, SkipTensorsCrossingOneBoundaryAndSkippingStages) {
  const Graph graph = skip_model(DType::f64);
  // Nodes: 0 fc1, 1 fc2, 2 act2, 3 fc3, 4 act3, 5 fc4, 6 add, 7 head, 8 loss; fc1's output `a` is
  // read by fc2 and add.
  const std::vector<std::vector<std::vector<int>>> cuts = {
      {{0, 1, 2, 3}, {4, 5, 6, 7, 8}},      // two tensors cross one boundary
      {{0, 1}, {2, 3, 4, 5}, {6, 7, 8}},    // `a` skips stage 1
      {{0, 1}, {2, 3}, {4, 5}, {6, 7, 8}},  // `a` skips stages 1 and 2
      {{0}, {1, 2, 3, 4, 5}, {6, 7, 8}},    // `a` read by two later stages: gradients add up
  };
  for (const auto& cut : cuts) {
    for (int micro_batches : {1, 4}) {
      for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
        for (bool recompute : {false, true}) {
          SCOPED_TRACE(std::to_string(cut.size()) + " stages, first " + std::to_string(cut[0].size()) + " nodes, " +
                       name_of({kind, static_cast<int>(cut.size()), micro_batches, recompute}));
          const Plan plan = plan_from(cut, micro_batches);
          const auto consumers = consumers_of(graph, plan);
          if (cut.size() > 2) {
            EXPECT_NE(consumers[0].back(), 1) << "the cut should make stage 0 feed a later stage directly";
          }
          expect_pipeline_equivalent(graph, plan, kind, recompute);
        }
      }
    }
  }
}

TEST(PipelineExecutor, DropoutMasksFollowTheMicroBatchSeeds) {
  const Graph graph = mlp(DType::f64, /*dropout=*/true);
  for (bool recompute : {false, true}) {
    SCOPED_TRACE(recompute ? "recompute" : "no recompute");
    expect_pipeline_equivalent(graph, even_plan(graph, 4, 4), ScheduleKind::one_f_one_b, recompute, nullptr, 4);
  }
  // One micro-batch: exactly the single-device step with the step's seed.
  expect_pipeline_equivalent(graph, even_plan(graph, 2, 1), ScheduleKind::gpipe, true, nullptr, 1);
}

TEST(PipelineExecutor, RepeatedStepsKeepMatching) {
  const Graph graph = mlp(DType::f64);
  const auto pipe = make_pipeline(graph, even_plan(graph, 4, 4), ScheduleKind::one_f_one_b, f64_options(), 3);
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = batch(DType::f64, host.stream(), 8);
  const double first = pipe->step(inputs);
  const double second = pipe->step(inputs);  // gradients are zeroed at each step
  EXPECT_EQ(first, second);
  const Reference ref = reference_step(graph, Device::cpu(), DType::f64, inputs, 3, 0);
  EXPECT_TRUE(matches_reference(*pipe, ref, kTol, kTol));
}

TEST(PipelineExecutor, AFailingLayerStopsEveryWorkerAndNamesStageAndMicroBatch) {
  // 11 nodes with the throwing one at index 6: the first of stage 2 of 4 (nodes 6..8).
  const Graph graph = mlp(DType::f64, false, 6);
  ASSERT_EQ(graph.node(graph.topological_order()[6]).name, "boom");
  const Plan plan = even_plan(graph, 4, 4);
  ASSERT_EQ(plan.stages[2].nodes.front(), 6);
  for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
    SCOPED_TRACE(schedule_kind_name(kind));
    const auto pipe = make_pipeline(graph, plan, kind, f64_options(), 1);
    Context host(Device::cpu());
    const std::vector<Tensor> inputs = batch(DType::f64, host.stream(), 2);
    for (int attempt = 0; attempt < 2; ++attempt) {  // the executor is usable again after a failure
      const auto start = std::chrono::steady_clock::now();
      const std::string message = error_message([&] { pipe->step(inputs); });
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_LT(seconds, 1.0);
      EXPECT_NE(message.find("injected failure"), std::string::npos) << message;
      EXPECT_NE(message.find("pipeline stage 2, micro-batch 0"), std::string::npos) << message;
    }
  }
}

TEST(PipelineExecutor, RefusesSchedulesThatDoNotFitThePlan) {
  const Graph graph = skip_model(DType::f64);
  const Plan plan = plan_from({{0, 1}, {2, 3, 4, 5}, {6, 7, 8}}, 4);  // stage 0 feeds stages 1 and 2
  PipelineOptions options;
  options.dtype = DType::f64;
  const std::vector<Device> devices = {Device::cpu(0), Device::cpu(1), Device::cpu(2)};
  // A chain schedule lacks the skip transfer 0 -> 2.
  const Schedule chain = make_schedule(ScheduleKind::gpipe, 3, 1, 4);
  EXPECT_FALSE(error_message([&] { PipelineExecutor(graph, plan, chain, devices, options); }).empty());
  // Wrong stage count, wrong micro-batch count.
  const auto consumers = consumers_of(graph, plan);
  EXPECT_ERROR_MENTIONS("stages but the plan has 3",
                        PipelineExecutor(graph, plan, make_schedule(ScheduleKind::gpipe, 2, 1, 4), devices, options));
  EXPECT_ERROR_MENTIONS(
      "micro-batches but the plan has 4",
      PipelineExecutor(graph, plan, make_schedule(ScheduleKind::gpipe, 3, 1, 2, consumers), devices, options));
  // An instruction list with a receive removed.
  Schedule broken = make_schedule(ScheduleKind::one_f_one_b, 3, 1, 4, consumers);
  auto& program = broken.programs[1];
  program.erase(
      std::find_if(program.begin(), program.end(), [](const Instruction& i) { return i.op == Op::recv_activation; }));
  EXPECT_ERROR_MENTIONS("before running", PipelineExecutor(graph, plan, broken, devices, options));
  // The good schedule with too few devices.
  EXPECT_ERROR_MENTIONS(
      "one per stage",
      PipelineExecutor(graph, plan, make_schedule(ScheduleKind::gpipe, 3, 1, 4, consumers), {Device::cpu(0)}, options));
}

TEST(PipelineExecutor, RefusesReplicasTheScheduleDoesNotHaveOrInsideAHybridGroup) {
  // Replicated stages run as units (test_replicated_stages.cc) with the step's schedule made for them.
  const Graph graph = mlp(DType::f64);
  Plan plan = even_plan(graph, 2, 2);
  const Schedule schedule = make_schedule(ScheduleKind::gpipe, 2, 1, 2, consumers_of(graph, plan));
  PipelineOptions options;
  options.dtype = DType::f64;
  plan.stages[1].replicas = 2;
  plan.stages[1].devices = {1, 2};
  const std::vector<Device> devices = {Device::cpu(0), Device::cpu(1), Device::cpu(2)};
  EXPECT_ERROR_MENTIONS("the schedule gives stage 1 1 replica(s) but the plan has 2",
                        PipelineExecutor(graph, plan, schedule, devices, options));
  options.group_sync.communicators.push_back(std::move(comm::make_inproc_communicators(1).front()));
  const Schedule replicated = make_schedule(ScheduleKind::gpipe, 2, 1, 2, consumers_of(graph, plan), true, {1, 2});
  EXPECT_ERROR_MENTIONS("do not run inside a hybrid group",
                        PipelineExecutor(graph, plan, replicated, devices, options));
}

TEST(PipelineExecutor, StepChecksItsInputs) {
  const Graph graph = mlp(DType::f64);
  const auto pipe = make_pipeline(graph, even_plan(graph, 2, 8), ScheduleKind::gpipe, f64_options(), 1);
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = batch(DType::f64, host.stream(), 2);
  EXPECT_ERROR_MENTIONS("1 inputs given", pipe->step({inputs[0]}));
  EXPECT_ERROR_MENTIONS("cannot be split into 8", pipe->step({inputs[0].slice(0, 4), inputs[1].slice(0, 4)}));
}

}  // namespace
}  // namespace baton::parallel
