// DataParallelEngine with one replica per process under mpiexec (2 and 4 ranks): the same numbers
// as the single-device run over the global batch in micro-batches, identical parameters on every
// rank, a model that differs between ranks refused on every rank, sharded evaluation that counts
// every sample once, and the stop flag of any rank seen by all.
#include <gtest/gtest.h>

#include "parallel/dp/data_parallel_engine.h"
#include "runtime/data/dataset.h"
#include "tests/parallel/comm/mpi_test_env.h"
#include "tests/parallel/data_parallel_test_util.h"

namespace baton::parallel {
namespace {

using baton::testing::all_close;
using baton::testing::to_doubles;
using comm::testing::mpi_runtime;
using comm::testing::mpi_world;

constexpr double kLr = 0.05;

TrainConfig dp_config() {
  TrainConfig config;
  config.optimizer = testing::dp_optimizer();
  return config;
}

// This process's replica on cpu:0 with a fresh communicator over every process.
DataParallelOptions one_replica_per_process(BucketOptions buckets = {}) {
  DataParallelOptions options;
  options.devices = {Device::cpu(0)};
  options.buckets = buckets;
  options.communicators.push_back(mpi_runtime().world());
  return options;
}

TEST(DataParallelMpi, Float64EqualsTheSingleDeviceRunOverMicroBatches) {
  const int world = mpi_runtime().size(), rank = mpi_runtime().rank();
  for (const Graph& graph : {testing::dp_mlp(DType::f64, 8), testing::dp_conv_bn(DType::f64, 8)}) {
    const testing::DpReference ref = testing::dp_reference(graph, world, 3, 5, kLr);
    DataParallelEngine engine(graph, dp_config(), one_replica_per_process({256, 512}));
    ASSERT_EQ(engine.replicas(), world);
    EXPECT_EQ(engine.data_shard().index, rank);
    EXPECT_EQ(engine.data_shard().count, world);
    EXPECT_EQ(engine.primary(), rank == 0);
    engine.initialize(5);
    const Stream stream = Stream::create(Device::cpu());
    std::vector<double> losses;
    for (int step = 0; step < 3; ++step) {
      const data::Batch global = testing::dp_batch(graph, stream, static_cast<uint64_t>(step));
      const data::Batch mine = global.split(world)[static_cast<size_t>(rank)];
      losses.push_back(engine.step(mine, static_cast<uint64_t>(step), kLr).value());
    }
    EXPECT_TRUE(all_close(losses, ref.losses, 1e-11, 1e-12));
    const ParamStore& store = engine.params(0);
    for (const ParamEntry& e : store.params()) {
      EXPECT_TRUE(all_close(to_doubles(store.param(e.name), stream), to_doubles(ref.params->param(e.name), stream),
                            1e-11, 1e-12))
          << e.name;
    }
    // Bitwise the same parameters on every rank: the sum over ranks is world x rank 0's.
    const Tensor mine = store.params_flat().to(Device::cpu(), stream);
    const Tensor root = store.params_flat().to(Device::cpu(), stream);
    mpi_world().broadcast(root, 0, stream)->wait();
    EXPECT_EQ(to_doubles(mine, stream), to_doubles(root, stream));
  }
}

TEST(DataParallelMpi, AModelThatDiffersBetweenRanksIsRefusedOnEveryRank) {
  const int rank = mpi_runtime().rank();
  const Graph graph = rank == 1 ? testing::dp_mlp(DType::f64, 8, /*unused=*/true) : testing::dp_mlp(DType::f64, 8);
  try {
    DataParallelEngine engine(graph, dp_config(), one_replica_per_process());
    FAIL() << "no error on rank " << rank;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model fingerprint"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
}

TEST(DataParallelMpi, EvaluationCountsEverySampleOnceAndStopFlagsAreShared) {
  const int world = mpi_runtime().size(), rank = mpi_runtime().rank();
  const Graph graph = testing::dp_conv_bn(DType::f32, 8);
  DataParallelEngine engine(graph, dp_config(), one_replica_per_process());
  engine.initialize(3);
  const std::unique_ptr<data::Dataset> test = data::open_dataset("synthetic:2x5x5:4:37", data::Split::test, 0);
  const EvalResult result = engine.evaluate(*test, 8, 1);
  EXPECT_EQ(result.samples, test->size());
  EXPECT_GE(result.top1, 0.0);
  EXPECT_LE(result.top1, 1.0);
  EXPECT_TRUE(engine.any_rank(rank == world - 1));
  EXPECT_FALSE(engine.any_rank(false));
}

}  // namespace
}  // namespace baton::parallel
