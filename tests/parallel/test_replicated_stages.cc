// Stages with unequal replicas in one pipeline (PipeDream's 2-1, 1-2, 2-1-2) on CPU virtual devices in
// float64: each replica takes whole micro-batches in turn (m mod r), transfers go between the replicas
// that take a micro-batch, and a stage's replicas sum their gradients. Three SGD-with-momentum steps
// give the losses, weights and gradients of the single-device run over the same batches in M micro-
// batches, for GPipe and 1F1B and both synchronisation strategies; evaluation and the errors too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parallel/parallel_training.h"
#include "tests/parallel/hybrid_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::error_message;

// A device per stage replica, cluster device d on cpu:d.
std::vector<Device> unit_devices(const Plan& plan) {
  return stage_replica_devices(
      plan, {Device::cpu(0), Device::cpu(1), Device::cpu(2), Device::cpu(3), Device::cpu(4), Device::cpu(5)});
}

void expect_equivalent(const Graph& graph, const std::vector<int>& replicas, ScheduleKind kind,
                       GradSyncStrategy strategy) {
  const int micro_batches = 4;
  const Plan plan = replicated_plan(graph, replicas, micro_batches);
  HybridOptions options = f64_hybrid_options(strategy);
  options.buckets = {.first_bucket_bytes = 256, .bucket_bytes = 512};  // several buckets per stage
  HybridExecutor pipeline(graph, plan, hybrid_schedule(graph, plan, kind), {unit_devices(plan)}, options);
  ASSERT_EQ(pipeline.groups(), 1);
  pipeline.initialize(11);
  PipelineOptions single_options = f64_options();
  single_options.optimizer = kSgd;
  const auto single = make_pipeline(graph, even_plan(graph, 1, micro_batches), ScheduleKind::gpipe, single_options, 11);
  expect_same_losses(
      graph, *single, 3, [&](const std::vector<Tensor>& in, const StepOptions& o) { return pipeline.step(in, o); },
      1e-12);
  PipelineExecutor& units = pipeline.group(0);
  int expected_units = 0;
  for (const int r : replicas) expected_units += r;
  ASSERT_EQ(units.num_stages(), expected_units);
  // Every replica's weights and gradients are the single run's (tensors_of keeps the last replica's;
  // the first replica's are compared through store_parameters below).
  EXPECT_TRUE(same_tensors(tensors_of(units, false), tensors_of(*single, false)));
  EXPECT_TRUE(same_tensors(tensors_of(units, true), tensors_of(*single, true)));
  // Evaluation runs each stage's first replica: the same outputs as the single run.
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = batch_for(graph, host.stream(), 42);
  expect_same_outputs(units.evaluate(inputs), single->evaluate(inputs), host.stream());
}

TEST(ReplicatedStages, EqualTheSingleDeviceRunForEveryShapeScheduleAndStrategy) {
  const Graph graph = mlp(DType::f64, /*dropout=*/true);  // each micro-batch's seed counts too
  int runs = 0;
  for (const std::vector<int>& replicas : std::vector<std::vector<int>>{{2, 1}, {1, 2}, {2, 1, 2}, {4, 2}}) {
    for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
      for (GradSyncStrategy strategy : {GradSyncStrategy::bucket, GradSyncStrategy::partition}) {
        std::string shape;
        for (const int r : replicas) shape += (shape.empty() ? "" : "-") + std::to_string(r);
        SCOPED_TRACE(shape + " " + std::string(schedule_kind_name(kind)) + " " + std::string(grad_sync_name(strategy)));
        expect_equivalent(graph, replicas, kind, strategy);
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 16);
}

TEST(ReplicatedStages, ParametersStoredFromTheFirstReplicaLoadIntoEveryOne) {
  const Graph graph = mlp(DType::f64);
  const Plan plan = replicated_plan(graph, {2, 1}, 4);
  HybridExecutor pipeline(graph, plan, hybrid_schedule(graph, plan, ScheduleKind::one_f_one_b), {unit_devices(plan)},
                          f64_hybrid_options(GradSyncStrategy::partition));
  pipeline.initialize(3);
  Context host(Device::cpu());
  ParamStore whole(graph, graph.topological_order(), DType::f64, host);
  pipeline.store_parameters(whole, host);
  PipelineExecutor& units = pipeline.group(0);
  for (int u = 0; u < units.num_stages(); ++u) {
    for (const ParamEntry& e : units.stage_params(u).params()) {
      EXPECT_EQ(baton::testing::to_doubles(units.stage_params(u).param(e.name), host.stream()),
                baton::testing::to_doubles(whole.param(e.name), host.stream()))
          << e.name << " on unit " << u << " (stage " << units.plan_stage_of(u) << " replica " << units.replica_of(u)
          << ")";
    }
  }
}

TEST(ReplicatedStages, ReplicasThatDoNotDivideTheMicroBatchesAreRefused) {
  const Graph graph = mlp(DType::f64);
  Plan plan = replicated_plan(graph, {2, 1}, 4);
  plan.micro_batches = 1;  // not a multiple of stage 0's 2 replicas
  EXPECT_NE(error_message([&] { validate_plan(plan, profile_structure(graph, "test")); }).find("multiple of 2"),
            std::string::npos);
}

}  // namespace
}  // namespace baton::parallel
