// Stages with unequal replicas across processes under mpiexec (4 and 6 ranks; 2 ranks hold no such
// plan): world rank u runs stage replica u. Three steps give, on every process, the losses of the
// single-device run over the same batches and its weights and gradients for the process's replica
// (float64, to rounding), for GPipe and 1F1B and both gradient strategies; evaluation runs each
// stage's first replica; a world that does not match the replicas is refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parallel/parallel_training.h"
#include "tests/parallel/comm/mpi_test_env.h"
#include "tests/parallel/hybrid_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::error_message;
using comm::testing::mpi_world;

constexpr int kReplicaMicroBatches = 4;  // every replica count below divides it

// Layouts with as many stage replicas as the world has processes, some stage replicated unequally.
std::vector<std::vector<int>> layouts_for(int processes) {
  if (processes == 4) return {{2, 1, 1}, {1, 2, 1}};
  if (processes == 6) return {{4, 2}, {2, 1, 2, 1}};
  return {};
}

std::string replicas_label(const std::vector<int>& replicas) {
  std::string out;
  for (const int r : replicas) {
    if (!out.empty()) out.push_back('-');
    out.append(std::to_string(r));
  }
  return out;
}

void expect_replicas_equivalent(const Graph& graph, const std::vector<int>& replicas, ScheduleKind kind,
                                GradSyncStrategy strategy) {
  const Plan plan = replicated_plan(graph, replicas, kReplicaMicroBatches);
  HybridOptions options = f64_hybrid_options(strategy);
  options.buckets = {.first_bucket_bytes = 256, .bucket_bytes = 512};  // several buckets per stage
  HybridExecutor pipeline(graph, plan, hybrid_schedule(graph, plan, kind), mpi_world(), Device::cpu(), options);
  ASSERT_EQ(pipeline.local_group(), 0);
  pipeline.initialize(11);
  PipelineOptions single_options = f64_options();
  single_options.optimizer = kSgd;
  const auto single =
      make_pipeline(graph, even_plan(graph, 1, kReplicaMicroBatches), ScheduleKind::gpipe, single_options, 11);
  expect_same_losses(
      graph, *single, 3, [&](const std::vector<Tensor>& in, const StepOptions& o) { return pipeline.step(in, o); },
      1e-12);
  PipelineExecutor& units = pipeline.group(0);
  const int unit = mpi_world().rank();
  ASSERT_TRUE(units.local(unit));
  for (bool gradients : {false, true}) {
    const auto mine = tensors_of(units, gradients);
    const auto all = tensors_of(*single, gradients);
    std::map<std::string, std::vector<double>> expected;
    for (const auto& entry : mine) {
      if (all.contains(entry.first)) expected[entry.first] = all.at(entry.first);
    }
    EXPECT_TRUE(same_tensors(mine, expected));
    // The first replicas hold every parameter once.
    Tensor compared = Tensor::empty_host({1}, DType::i64);
    compared.data<int64_t>()[0] = units.first_replica(unit) ? static_cast<int64_t>(mine.size()) : 0;
    mpi_world().all_reduce(compared, comm::ReduceOp::sum, Stream::create(Device::cpu()))->wait();
    EXPECT_EQ(compared.data<int64_t>()[0], static_cast<int64_t>(all.size()));
  }
  // Evaluation: the process of the output's (first replica) unit has the single run's outputs.
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = batch_for(graph, host.stream(), 42);
  const PipelineOutputs outputs = units.evaluate(inputs);
  if (units.routing().output_stage().at(0) != unit) return;
  expect_same_outputs(outputs, single->evaluate(inputs), host.stream());
}

TEST(ReplicatedStagesMpi, EqualTheSingleDeviceRunForEveryShapeScheduleAndStrategy) {
  const std::vector<std::vector<int>> layouts = layouts_for(mpi_world().size());
  if (layouts.empty()) GTEST_SKIP() << "no layout with unequal replicas has " << mpi_world().size() << " replicas";
  const Graph graph = mlp(DType::f64, /*dropout=*/true);
  for (const std::vector<int>& replicas : layouts) {
    for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
      for (GradSyncStrategy strategy : {GradSyncStrategy::bucket, GradSyncStrategy::partition}) {
        SCOPED_TRACE(replicas_label(replicas) + " " + std::string(schedule_kind_name(kind)) + " " +
                     std::string(grad_sync_name(strategy)));
        expect_replicas_equivalent(graph, replicas, kind, strategy);
      }
    }
  }
}

TEST(ReplicatedStagesMpi, AWorldThatDoesNotMatchTheReplicasIsRefused) {
  const Graph graph = mlp(DType::f64);
  const Plan plan = replicated_plan(graph, {2, 1}, 2);  // 3 replicas: never 2, 4 or 6 processes
  const std::string message = error_message([&] {
    HybridExecutor(graph, plan, hybrid_schedule(graph, plan, ScheduleKind::gpipe), mpi_world(), Device::cpu(),
                   f64_hybrid_options(GradSyncStrategy::bucket));
  });
  EXPECT_NE(message.find("a plan with 3 stage replicas needs as many processes (one each), not " +
                         std::to_string(mpi_world().size())),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace baton::parallel
