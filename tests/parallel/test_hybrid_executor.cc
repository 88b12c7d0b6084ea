// The hybrid on CPU virtual devices in float64: G groups of an S-stage pipeline, stage s of every
// group averaging its gradients over the groups. For G x S in {2x2, 2x3, 4x1, 1x4}, the three
// schedules and both synchronisation strategies, three SGD-with-momentum steps give the losses,
// gradients and weights of the single-device run over the same global batches in G x M
// micro-batches (BatchNorm with deferred statistics too); one group is the plain pipeline; and
// bad plans, schedules and batches are refused. (The traced all-reduces: test_hybrid_trace.cc.)
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/parallel/hybrid_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::error_message;
using baton::testing::to_doubles;

constexpr double kHybridTol = 1e-12;  // float64: equal to rounding (the summation order differs)
constexpr int kHybridSteps = 3;

// kHybridSteps steps of the hybrid against the single-device run (a one-stage pipeline on cpu:0) over the
// same batches in G x M micro-batches: every step's loss, and after the last every group's weights
// and gradients. (Running statistics are each group's own, from its share of the batch.)
void expect_hybrid_equivalent(const Graph& graph, Layout layout, ScheduleKind kind, GradSyncStrategy strategy,
                              bool deferred_bn = false) {
  const int micro_batches = 2;
  const int chunks = kind == ScheduleKind::interleaved && layout.stages % 2 == 0 ? 2 : 1;
  const Plan plan = hybrid_plan(graph, layout, micro_batches, chunks);
  HybridOptions options = f64_hybrid_options(strategy);
  options.pipeline.deferred_batch_norm = deferred_bn;
  options.buckets = {.first_bucket_bytes = 256, .bucket_bytes = 512};  // several buckets per stage
  HybridExecutor hybrid(graph, plan, hybrid_schedule(graph, plan, kind), plan_devices(plan), options);
  hybrid.initialize(11);

  PipelineOptions single_options = f64_options();
  single_options.optimizer = kSgd;
  single_options.deferred_batch_norm = deferred_bn;
  const auto single =
      make_pipeline(graph, even_plan(graph, 1, layout.groups * micro_batches), ScheduleKind::gpipe, single_options, 11);
  expect_same_losses(
      graph, *single, kHybridSteps,
      [&](const std::vector<Tensor>& in, const StepOptions& o) { return hybrid.step(in, o); }, kHybridTol);
  for (int g = 0; g < hybrid.groups(); ++g) {
    SCOPED_TRACE("group " + std::to_string(g));
    EXPECT_TRUE(same_tensors(tensors_of(hybrid.group(g), false), tensors_of(*single, false)));
    EXPECT_TRUE(same_tensors(tensors_of(hybrid.group(g), true), tensors_of(*single, true)));
  }
}

TEST(HybridExecutor, EqualsSingleDeviceForEveryLayoutScheduleAndStrategy) {
  const Graph graph = mlp(DType::f64, /*dropout=*/true);  // each micro-batch's seed counts too
  int runs = 0;
  for (const Layout layout : {Layout{2, 2}, Layout{2, 3}, Layout{4, 1}, Layout{1, 4}}) {
    for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
      for (GradSyncStrategy strategy : {GradSyncStrategy::bucket, GradSyncStrategy::partition}) {
        SCOPED_TRACE(std::to_string(layout.groups) + "x" + std::to_string(layout.stages) + " " +
                     std::string(schedule_kind_name(kind)) + " " + std::string(grad_sync_name(strategy)));
        expect_hybrid_equivalent(graph, layout, kind, strategy);
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 24);
}

TEST(HybridExecutor, BatchNormWithDeferredStatisticsEqualsSingleDevice) {
  const Graph graph = bn_cnn();
  for (GradSyncStrategy strategy : {GradSyncStrategy::bucket, GradSyncStrategy::partition}) {
    for (bool deferred : {false, true}) {
      SCOPED_TRACE(std::string(grad_sync_name(strategy)) + (deferred ? " deferred" : ""));
      expect_hybrid_equivalent(graph, {2, 2}, ScheduleKind::one_f_one_b, strategy, deferred);
    }
  }
}

TEST(HybridExecutor, AStageWithoutParametersSynchronisesNothing) {
  // Stage 1 holds act4 alone (mlp's nodes: fc1 act1 fc2 act2 fc3 act3 fc4 act4 head loss).
  const Graph graph = mlp(DType::f64);
  const Plan plan = replicated(plan_from({{0, 1, 2, 3, 4, 5, 6}, {7}, {8, 9}}, 2), 2);
  for (GradSyncStrategy strategy : {GradSyncStrategy::bucket, GradSyncStrategy::partition}) {
    SCOPED_TRACE(grad_sync_name(strategy));
    HybridOptions options = f64_hybrid_options(strategy);
    const std::unique_ptr<HybridExecutor> owned = one_f_one_b_hybrid(graph, plan, options, 11);
    HybridExecutor& hybrid = *owned;
    Context host(Device::cpu());
    const std::vector<Tensor> inputs = batch(DType::f64, host.stream(), 5);
    const Reference ref = reference_step(graph, Device::cpu(), DType::f64, inputs, 11, 99, 4, kSgd, kLr);
    const double loss = hybrid.step(inputs, {.seed = 99, .lr = kLr});
    EXPECT_NEAR(loss, ref.loss, kHybridTol * std::abs(ref.loss));
    for (int g = 0; g < 2; ++g)
      EXPECT_TRUE(matches_reference(hybrid.group(g), ref, kHybridTol, kHybridTol)) << "group " << g;
  }
}

TEST(HybridExecutor, OneGroupIsThePlainPipeline) {
  // G = 1 builds no communicator; the all_reduce instructions do nothing.
  expect_hybrid_equivalent(mlp(DType::f64), {1, 2}, ScheduleKind::gpipe, GradSyncStrategy::partition);
}

TEST(HybridExecutor, UnequalReplicationIsRefusedNamingTheStage) {
  const Graph graph = mlp(DType::f64);
  Plan plan = hybrid_plan(graph, {2, 2}, 2, 1);
  plan.stages[1].replicas = 1;
  plan.stages[1].devices = {1};
  const std::string message = error_message([&] { plan_groups(plan); });
  EXPECT_NE(message.find("stage 1 has 1 replicas where stage 0 has 2"), std::string::npos) << message;
  EXPECT_NE(message.find("unequal replication"), std::string::npos) << message;
}

TEST(HybridExecutor, AScheduleWithoutAllReduceIsRefused) {
  const Graph graph = mlp(DType::f64);
  const Plan plan = hybrid_plan(graph, {2, 2}, 2, 1);
  const Schedule plain = make_schedule(ScheduleKind::gpipe, 2, 1, plan.micro_batches, consumers_of(graph, plan),
                                       /*all_reduce=*/false, {2, 2});
  const std::string message = error_message([&] { HybridExecutor(graph, plan, plain, plan_devices(plan)); });
  EXPECT_NE(message.find("0 all_reduce instructions for stage 0"), std::string::npos) << message;
  EXPECT_NE(message.find("in hybrid group 0"), std::string::npos) << message;
}

TEST(HybridExecutor, ABatchThatDoesNotSplitOverTheGroupsIsAnError) {
  const Graph graph = mlp(DType::f64);
  const Plan plan = hybrid_plan(graph, {2, 2}, 2, 1);
  HybridOptions options;
  options.pipeline = f64_options();
  HybridExecutor hybrid(graph, plan, hybrid_schedule(graph, plan, ScheduleKind::gpipe), plan_devices(plan), options);
  hybrid.initialize(1);
  Context host(Device::cpu());
  const std::vector<Tensor> odd = {baton::testing::random_tensor(Shape{15, kFeatures}, DType::f64, host.stream(), 1),
                                   Tensor::from_vector<int64_t>(std::vector<int64_t>(15, 0), Shape{15}, host.stream())};
  const std::string message = error_message([&] { hybrid.step(odd); });
  EXPECT_NE(message.find("15 rows does not split evenly over 2 groups"), std::string::npos) << message;
}

}  // namespace
}  // namespace baton::parallel
