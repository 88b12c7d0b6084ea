// The mpi communicator, run by ctest under mpirun with 2 and 4 processes: every operation and dtype
// against results computed in the test, bit for bit (the same bits the inproc backend gives), odd and
// zero sizes, split, send/recv, bad arguments, and the overlap with the caller.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/parallel/comm/comm_checks.h"
#include "tests/parallel/comm/mpi_test_env.h"

namespace baton::comm {
namespace {

using namespace std::chrono_literals;
using testing::mpi_runtime;
using testing::mpi_world;

TEST(Mpi, RanksSizesAndThreadLevel) {
  const MpiRuntime& runtime = mpi_runtime();
  Communicator& world = mpi_world();
  EXPECT_EQ(world.rank(), runtime.rank());
  EXPECT_EQ(world.size(), runtime.size());
  EXPECT_EQ(world.backend(), "mpi");
  EXPECT_GE(runtime.local_rank(), 0);
  EXPECT_LT(runtime.local_rank(), runtime.local_size());
  EXPECT_EQ(runtime.local_size(), runtime.size()) << "every process of the test runs on this machine";
  EXPECT_EQ(runtime.thread_level(), "MPI_THREAD_MULTIPLE");
  EXPECT_TRUE(MpiRuntime::available());
}

TEST(Mpi, OneRuntimePerProcess) { EXPECT_ERROR_MENTIONS("MPI is already initialised by another", MpiRuntime()); }

TEST(Mpi, AllReduceSumAndMeanOfEveryDTypeAndSize) { testing::check_every_all_reduce(mpi_world()); }
TEST(Mpi, BroadcastFromEveryRoot) { testing::check_every_broadcast(mpi_world()); }
TEST(Mpi, AllGatherOfEveryDTypeAndSize) { testing::check_every_all_gather(mpi_world()); }
TEST(Mpi, ReduceScatterSumAndMean) { testing::check_every_reduce_scatter(mpi_world()); }
TEST(Mpi, ManyOperationsInFlightCompleteInIssueOrder) { testing::check_many_in_flight(mpi_world()); }
TEST(Mpi, WaitOnAStreamAndBarrier) { testing::check_wait_on_and_barrier(mpi_world()); }
TEST(Mpi, RefusedArguments) { testing::check_refused_arguments(mpi_world()); }
TEST(Mpi, AgreementOfDescriptions) { testing::check_agreement_cases(mpi_world()); }

TEST(Mpi, RingOfSendsAndReceives) {
  if (mpi_world().size() < 2) GTEST_SKIP() << "send and recv need a peer";
  testing::check_ring_exchange(mpi_world(), 5, 1000, 7);
  testing::check_ring_exchange(mpi_world(), 2, 300000, 8);  // larger than MPI's eager limit
}

TEST(Mpi, SplitByParityInReverseOrder) {
  testing::check_split(mpi_world(), false);
  testing::check_split(mpi_world(), true);
}

TEST(Mpi, SplitCommunicatorsRunCollectivesOfTheirOwn) {
  Communicator& world = mpi_world();
  const std::unique_ptr<Communicator> half = world.split(world.rank() % 2, world.rank());
  ASSERT_NE(half, nullptr);
  testing::check_all_reduce(*half, DType::bf16, ReduceOp::mean, 1031, 11);
  testing::check_all_gather(*half, DType::i64, 7, 12);
  testing::check_reduce_scatter(*half, DType::f16, ReduceOp::sum, 5, 13);
  testing::check_all_reduce(world, DType::f32, ReduceOp::sum, 9, 14);  // the parent is still usable
}

TEST(Mpi, AllGatherInPlace) {
  Communicator& world = mpi_world();
  const Stream s = Stream::create(Device::cpu());
  const Tensor output = baton::testing::poisoned(Shape{world.size(), 3}, DType::f64, s);
  Tensor mine = output.slice(world.rank(), world.rank() + 1);
  mine.copy_from(testing::rank_input(Shape{1, 3}, DType::f64, world.rank(), 21), s);
  world.all_gather(mine, output, s)->wait();
  for (int r = 0; r < world.size(); ++r) {
    EXPECT_TRUE(testing::same_bytes(output.slice(r, r + 1), testing::rank_input(Shape{1, 3}, DType::f64, r, 21)))
        << "slot " << r;
  }
  EXPECT_ERROR_MENTIONS("input overlaps output other than as this rank's slot of it",
                        world.all_gather(output.slice(0, 1).reshape(Shape{3}).slice(1, 3).reshape(Shape{2}),
                                         output.reshape(Shape{3 * world.size()}).slice(0, 2 * world.size()), s));
}

// Rank 1 issues its all_reduce 300 ms after the barrier: rank 0's returns at once and is not done.
TEST(Mpi, IssueReturnsBeforeTheReductionCompletes) {
  Communicator& world = mpi_world();
  if (world.size() < 2) GTEST_SKIP() << "needs a peer";
  const Stream s = Stream::create(Device::cpu());
  const Tensor buffer = Tensor::from_vector(std::vector<float>{1.0f}, Shape{1}, s);
  world.barrier();
  if (world.rank() == 1) std::this_thread::sleep_for(300ms);
  const auto start = std::chrono::steady_clock::now();
  const WorkHandle work = world.all_reduce(buffer, ReduceOp::sum, s);
  const bool done_at_once = work->done();
  if (world.rank() == 0 && std::chrono::steady_clock::now() - start < 200ms) {
    EXPECT_FALSE(done_at_once);
  }
  work->wait();
  EXPECT_EQ(buffer.to_vector<float>(s)[0], static_cast<float>(world.size()));
}

}  // namespace
}  // namespace baton::comm
