// The hybrid across processes on GPUs, threads standing in for the processes (an in-process world,
// each rank on its own GPU; under mpirun the world is MPI's and the code is the same): activations
// and gradients through one NCCL communicator per link between positions, each stage's gradients
// over the groups through NCCL. Every layout of 2 and 4 ranks, GPipe and 1F1B, both gradient
// strategies, skip tensors going straight to their consumer's rank, and unequal replicas (a rank per
// stage replica, each stage's replicas summing their gradients through NCCL): every rank's loss and
// its stages' weights follow the single-device CPU run over the same batches (float32, to 1e-4).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "parallel/comm/inproc_communicator.h"
#include "tests/parallel/comm/comm_checks.h"
#include "tests/parallel/hybrid_test_util.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::all_close;

constexpr int kSteps = 3;
constexpr int kMicroBatches = 2;
constexpr double kTol = 1e-4;

struct Reference {
  std::vector<double> losses;
  std::map<std::string, std::vector<double>> weights;
};

// The single-device CPU run over the batches every rank trains on, in the step's M micro-batches.
Reference single_device(const Graph& graph, int micro_batches) {
  PipelineOptions options;
  options.optimizer = kSgd;
  const auto single = make_pipeline(graph, even_plan(graph, 1, micro_batches), ScheduleKind::gpipe, options, 11);
  const Stream host = Stream::create(Device::cpu());
  Reference out;
  for (uint64_t step = 0; step < kSteps; ++step) {
    out.losses.push_back(single->step(batch(DType::f32, host, 5 + step), {.seed = step, .lr = kLr}));
  }
  out.weights = tensors_of(*single, /*gradients=*/false);
  return out;
}

// A rank per stage replica (G x S for groups).
void expect_follows_single_device(const Graph& graph, const Plan& plan, ScheduleKind kind, GradSyncStrategy strategy) {
  int ranks = 0;
  for (const Stage& stage : plan.stages) ranks += stage.replicas;
  if (cuda_device_count() < ranks)
    GTEST_SKIP() << "needs " << ranks << " GPUs; this machine has " << cuda_device_count();
  const Schedule schedule = hybrid_schedule(graph, plan, kind);
  const Reference reference = single_device(graph, plan.micro_batches);
  HybridOptions options;
  options.pipeline.optimizer = kSgd;
  options.grad_sync = strategy;
  options.buckets = {.first_bucket_bytes = 256, .bucket_bytes = 512};
  std::vector<size_t> compared(static_cast<size_t>(ranks));
  comm::testing::run_ranks(comm::make_inproc_communicators(ranks), [&](comm::Communicator& world) {
    const int rank = world.rank();
    HybridExecutor hybrid(graph, plan, schedule, world, Device::cuda(rank), options);
    hybrid.initialize(11);
    const Stream host = Stream::create(Device::cpu());
    for (uint64_t step = 0; step < kSteps; ++step) {
      const double loss = hybrid.step(batch(DType::f32, host, 5 + step), {.seed = step, .lr = kLr});
      const double expected = reference.losses[step];
      EXPECT_NEAR(loss, expected, kTol * std::max(1.0, std::abs(expected))) << "rank " << rank << " step " << step;
    }
    PipelineExecutor& pipe = hybrid.group(hybrid.local_group());
    const auto mine = tensors_of(pipe, /*gradients=*/false);
    for (const auto& [name, values] : mine) {
      EXPECT_TRUE(all_close(values, reference.weights.at(name), kTol, kTol)) << "rank " << rank << ": " << name;
    }
    bool first = true;  // of its stage's replicas (every stage of a group is)
    for (int s = 0; s < pipe.num_stages(); ++s) first = first && (!pipe.local(s) || pipe.first_replica(s));
    compared[static_cast<size_t>(rank)] = first ? mine.size() : 0;
  });
  // Every parameter was compared, once per group (unequal replicas: one group).
  size_t total = 0;
  for (size_t n : compared) total += n;
  const size_t groups = unequal_replication(plan) ? 1 : static_cast<size_t>(plan.stages.front().replicas);
  EXPECT_EQ(total, groups * reference.weights.size());
}

void expect_follows_single_device(const Graph& graph, Layout layout, ScheduleKind kind, GradSyncStrategy strategy) {
  expect_follows_single_device(graph, hybrid_plan(graph, layout, kMicroBatches, 1), kind, strategy);
}

std::string label(Layout layout, ScheduleKind kind, GradSyncStrategy strategy) {
  return std::to_string(layout.groups) + "x" + std::to_string(layout.stages) + " " +
         std::string(schedule_kind_name(kind)) + " " + std::string(grad_sync_name(strategy));
}

class HybridProcessesCuda : public ::testing::Test {
 protected:
  void SetUp() override { BATON_REQUIRE_GPU(); }
};

TEST_F(HybridProcessesCuda, EveryLayoutOfTwoRanksFollowsTheSingleDeviceRun) {
  const Graph graph = mlp(DType::f32);
  for (Layout layout : {Layout{1, 2}, Layout{2, 1}}) {
    for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
      for (GradSyncStrategy strategy : {GradSyncStrategy::bucket, GradSyncStrategy::partition}) {
        SCOPED_TRACE(label(layout, kind, strategy));
        expect_follows_single_device(graph, layout, kind, strategy);
      }
    }
  }
}

TEST_F(HybridProcessesCuda, FourRanksAndSkipTensorsFollowTheSingleDeviceRun) {
  for (Layout layout : {Layout{2, 2}, Layout{1, 4}}) {
    SCOPED_TRACE(label(layout, ScheduleKind::one_f_one_b, GradSyncStrategy::partition));
    expect_follows_single_device(mlp(DType::f32), layout, ScheduleKind::one_f_one_b, GradSyncStrategy::partition);
  }
  SCOPED_TRACE("skip model 1x4");
  expect_follows_single_device(skip_model(DType::f32), {1, 4}, ScheduleKind::one_f_one_b, GradSyncStrategy::bucket);
}

TEST_F(HybridProcessesCuda, UnequalReplicasOnFourRanksFollowTheSingleDeviceRun) {
  const Graph graph = mlp(DType::f32);
  SCOPED_TRACE("2-1-1 1f1b bucket");
  expect_follows_single_device(graph, replicated_plan(graph, {2, 1, 1}, 4), ScheduleKind::one_f_one_b,
                               GradSyncStrategy::bucket);
  SCOPED_TRACE("1-2-1 1f1b partition");
  expect_follows_single_device(graph, replicated_plan(graph, {1, 2, 1}, 4), ScheduleKind::one_f_one_b,
                               GradSyncStrategy::partition);
}

}  // namespace
}  // namespace baton::parallel
