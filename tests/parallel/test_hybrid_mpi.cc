// The hybrid across processes under mpiexec (2, 4 and 6 ranks): every G x P layout the world allows
// (P pipeline positions per group, one process each), the three schedules and both gradient
// strategies give, on every process, the loss of the single-device run over the same global batch
// in G x M micro-batches, and its weights and gradients for the process's own stages (float64, to
// rounding); skip tensors go straight to their consumer's process; BatchNorm with deferred
// statistics too; and a world that does not match the layout, or processes that would run different
// plans or models, are refused on every process; the link between processes is measured once for all.
#include <gtest/gtest.h>

#include <string>

#include "parallel/parallel_training.h"
#include "tests/parallel/comm/mpi_test_env.h"
#include "tests/parallel/hybrid_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::error_message;
using comm::testing::mpi_world;

constexpr double kTol = 1e-12;
constexpr int kSteps = 3;
constexpr int kMicroBatches = 2;

// The single-device run's values of the names `local` holds.
std::map<std::string, std::vector<double>> restricted(const std::map<std::string, std::vector<double>>& all,
                                                      const std::map<std::string, std::vector<double>>& local) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& entry : local) {
    if (all.contains(entry.first)) out[entry.first] = all.at(entry.first);
  }
  return out;
}

// `groups` groups of the world's size / groups positions (`chunks` stages on each), kSteps steps
// against the single-device run in this process.
void expect_equivalent(const Graph& graph, int groups, int chunks, ScheduleKind kind, GradSyncStrategy strategy,
                       bool deferred_bn = false) {
  const int positions = mpi_world().size() / groups;
  const Plan plan = hybrid_plan(graph, {groups, positions * chunks}, kMicroBatches, chunks);
  HybridOptions options = f64_hybrid_options(strategy);
  options.pipeline.deferred_batch_norm = deferred_bn;
  options.buckets = {.first_bucket_bytes = 256, .bucket_bytes = 512};
  HybridExecutor hybrid(graph, plan, hybrid_schedule(graph, plan, kind), mpi_world(), Device::cpu(), options);
  ASSERT_EQ(hybrid.local_group(), mpi_world().rank() / positions);
  hybrid.initialize(11);

  PipelineOptions single_options = f64_options();
  single_options.optimizer = kSgd;
  single_options.deferred_batch_norm = deferred_bn;
  const auto single =
      make_pipeline(graph, even_plan(graph, 1, groups * kMicroBatches), ScheduleKind::gpipe, single_options, 11);
  expect_same_losses(
      graph, *single, kSteps, [&](const std::vector<Tensor>& in, const StepOptions& o) { return hybrid.step(in, o); },
      kTol);
  PipelineExecutor& mine = hybrid.group(hybrid.local_group());
  for (bool gradients : {false, true}) {
    const auto local = tensors_of(mine, gradients);
    EXPECT_TRUE(same_tensors(local, restricted(tensors_of(*single, gradients), local), kTol));
    // Every parameter was compared, once per group (a stage may hold none, e.g. the loss alone).
    Tensor compared = Tensor::empty_host({1}, DType::i64);
    compared.data<int64_t>()[0] = static_cast<int64_t>(local.size());
    mpi_world().all_reduce(compared, comm::ReduceOp::sum, Stream::create(Device::cpu()))->wait();
    EXPECT_EQ(compared.data<int64_t>()[0], static_cast<int64_t>(groups * tensors_of(*single, gradients).size()));
  }
}

std::string label(int groups, ScheduleKind kind, GradSyncStrategy strategy) {
  return std::to_string(groups) + "x" + std::to_string(mpi_world().size() / groups) + " " +
         std::string(schedule_kind_name(kind)) + " " + std::string(grad_sync_name(strategy));
}

TEST(HybridMpi, EqualsSingleDeviceForEveryLayoutScheduleAndStrategy) {
  const Graph graph = mlp(DType::f64, /*dropout=*/true);
  for (int groups = 1; groups <= mpi_world().size(); ++groups) {
    // 6 ranks: 1x6 and 2x3 (the batch of 16 does not split over 3 or 6 groups).
    if (mpi_world().size() % groups != 0 || kBatch % (groups * kMicroBatches) != 0) continue;
    const int positions = mpi_world().size() / groups;
    for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
      for (GradSyncStrategy strategy : {GradSyncStrategy::bucket, GradSyncStrategy::partition}) {
        // Interleaved: two stages per process, where the 10-node model has the nodes.
        const int chunks = kind == ScheduleKind::interleaved && 2 * positions <= graph.num_nodes() ? 2 : 1;
        SCOPED_TRACE(label(groups, kind, strategy));
        expect_equivalent(graph, groups, chunks, kind, strategy);
      }
    }
  }
}

TEST(HybridMpi, SkipTensorsAndDeferredBatchNormStatistics) {
  const int groups = 2;  // of world / 2 positions each
  SCOPED_TRACE("skip model");
  expect_equivalent(skip_model(DType::f64), 1, 1, ScheduleKind::one_f_one_b, GradSyncStrategy::bucket);
  for (bool deferred : {false, true}) {
    SCOPED_TRACE(deferred ? "deferred" : "per micro-batch");
    expect_equivalent(bn_cnn(), groups, 1, ScheduleKind::one_f_one_b, GradSyncStrategy::partition, deferred);
  }
}

TEST(HybridMpi, AWorldThatDoesNotMatchTheLayoutIsRefused) {
  const Graph graph = mlp(DType::f64);
  const int too_many = mpi_world().size() * 2;  // positions per group
  const Plan plan = hybrid_plan(graph, {1, too_many}, kMicroBatches, 1);
  const std::string message = error_message([&] {
    HybridExecutor(graph, plan, hybrid_schedule(graph, plan, ScheduleKind::gpipe), mpi_world(), Device::cpu(),
                   f64_hybrid_options(GradSyncStrategy::bucket));
  });
  EXPECT_NE(message.find("need " + std::to_string(too_many) + " processes, not " + std::to_string(mpi_world().size())),
            std::string::npos)
      << message;
}

TEST(HybridMpi, APlanOrModelThatDiffersBetweenProcessesIsRefusedOnEveryProcess) {
  const int rank = mpi_world().rank();
  const Graph graph = mlp(DType::f64);
  // Rank 1 runs twice the micro-batches.
  const Plan plan = hybrid_plan(graph, {1, mpi_world().size()}, rank == 1 ? 2 * kMicroBatches : kMicroBatches, 1);
  const std::string message = error_message([&] {
    HybridExecutor(graph, plan, hybrid_schedule(graph, plan, ScheduleKind::gpipe), mpi_world(), Device::cpu(),
                   f64_hybrid_options(GradSyncStrategy::bucket));
  });
  EXPECT_NE(message.find("the hybrid's plan and model differs between ranks"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 1"), std::string::npos) << message;
}

// The link between processes the planner prices (measure_process_link): a positive bandwidth and a
// latency from ranks 0 and 1's ping-pong, the same figures on every rank.
TEST(HybridMpi, TheLinkBetweenProcessesIsMeasuredOnceForAll) {
  comm::Communicator& world = mpi_world();
  const Link link = measure_process_link(world);
  EXPECT_EQ(link.kind, "mpi");
  EXPECT_GT(link.bandwidth_gbs, 0.0);
  EXPECT_GE(link.latency_us, 0.0);
  const Stream host = Stream::create(Device::cpu());
  Tensor mine = Tensor::empty_host({2}, DType::f64);
  mine.data<double>()[0] = link.bandwidth_gbs;
  mine.data<double>()[1] = link.latency_us;
  Tensor all = Tensor::empty_host({2 * world.size()}, DType::f64);
  world.all_gather(mine, all, host)->wait();
  for (int r = 0; r < world.size(); ++r) {
    EXPECT_EQ(all.data<double>()[2 * r], link.bandwidth_gbs) << "rank " << r;
    EXPECT_EQ(all.data<double>()[2 * r + 1], link.latency_us) << "rank " << r;
  }
}

}  // namespace
}  // namespace baton::parallel
