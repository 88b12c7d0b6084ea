// The in-process communicator with 1 to 4 ranks: every operation and dtype against results computed
// in the test (bitwise, so every rank holds the same bits), odd and zero sizes, split, send/recv.
#include <gtest/gtest.h>

#include "parallel/comm/inproc_communicator.h"
#include "parallel/comm/reduce_kernel.h"
#include "tests/parallel/comm/comm_checks.h"

namespace baton::comm {
namespace {

using testing::run_ranks;

class InprocRanks : public ::testing::TestWithParam<int> {
 protected:
  std::vector<std::unique_ptr<Communicator>> comms_ = make_inproc_communicators(GetParam());
};

TEST_P(InprocRanks, RanksAndBackend) {
  ASSERT_EQ(static_cast<int>(comms_.size()), GetParam());
  for (int r = 0; r < GetParam(); ++r) {
    EXPECT_EQ(comms_[static_cast<size_t>(r)]->rank(), r);
    EXPECT_EQ(comms_[static_cast<size_t>(r)]->size(), GetParam());
    EXPECT_EQ(comms_[static_cast<size_t>(r)]->backend(), "inproc");
  }
}

TEST_P(InprocRanks, AllReduceSumAndMeanOfEveryDTypeAndSize) { run_ranks(comms_, testing::check_every_all_reduce); }
TEST_P(InprocRanks, BroadcastFromEveryRoot) { run_ranks(comms_, testing::check_every_broadcast); }
TEST_P(InprocRanks, AllGatherOfEveryDTypeAndSize) { run_ranks(comms_, testing::check_every_all_gather); }
TEST_P(InprocRanks, ReduceScatterSumAndMean) { run_ranks(comms_, testing::check_every_reduce_scatter); }

TEST_P(InprocRanks, ManyOperationsInFlightCompleteInIssueOrder) { run_ranks(comms_, testing::check_many_in_flight); }

TEST_P(InprocRanks, RingOfSendsAndReceives) {
  if (GetParam() < 2) GTEST_SKIP() << "send and recv need a peer";
  run_ranks(comms_, [](Communicator& comm) { testing::check_ring_exchange(comm, 5, 1000, 7); });
}

TEST_P(InprocRanks, SplitByParityInReverseOrder) {
  run_ranks(comms_, [](Communicator& comm) {
    testing::check_split(comm, false);
    testing::check_split(comm, true);
  });
}

TEST_P(InprocRanks, AgreementOfDescriptions) { run_ranks(comms_, testing::check_agreement_cases); }

TEST_P(InprocRanks, WaitOnAStreamAndBarrier) { run_ranks(comms_, testing::check_wait_on_and_barrier); }

INSTANTIATE_TEST_SUITE_P(Ranks, InprocRanks, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& p) { return std::to_string(p.param); });

// f16 accumulates in f32 and rounds once: 2048 + 1 + 1 is 2050 (2048 + 1 in f16 would round back to 2048).
TEST(InprocReduction, HalfAccumulatesInFloatAndRoundsOnce) {
  auto comms = make_inproc_communicators(3);
  const std::vector<float> values = {2048.0f, 1.0f, 1.0f};
  std::vector<Half> results(3);
  run_ranks(comms, [&](Communicator& comm) {
    const Stream s = Stream::create(Device::cpu(comm.rank()));
    const Tensor buffer = Tensor::from_vector(std::vector<Half>{float_to_half(values[comm.rank()])}, Shape{1}, s);
    comm.all_reduce(buffer, ReduceOp::sum, s)->wait();
    results[static_cast<size_t>(comm.rank())] = buffer.to_vector<Half>(s)[0];
  });
  for (const Half h : results) EXPECT_EQ(half_to_float(h), 2050.0f);
}

// mean divides the float sum once: (0.1 + 0.2 + 0.3) / 3 in float, not 0.1/3 + 0.2/3 + 0.3/3.
TEST(InprocReduction, MeanDividesTheSumOnce) {
  auto comms = make_inproc_communicators(3);
  const std::vector<float> values = {0.1f, 0.2f, 0.3f};
  run_ranks(comms, [&](Communicator& comm) {
    const Stream s = Stream::create(Device::cpu(comm.rank()));
    const Tensor buffer = Tensor::from_vector(std::vector<float>{values[comm.rank()]}, Shape{1}, s);
    comm.all_reduce(buffer, ReduceOp::mean, s)->wait();
    EXPECT_EQ(buffer.to_vector<float>(s)[0], ((0.1f + 0.2f) + 0.3f) / 3.0f);
  });
}

TEST(InprocReduction, IntegerSumsWrapAround) {
  const int32_t big = 2147483647;
  const int32_t one = 1;
  int32_t out = 0;
  const void* sources[] = {&big, &one};
  void* dests[] = {&out};
  reduce_in_order(DType::i32, ReduceOp::sum, 2, sources, dests, 1);
  EXPECT_EQ(out, -2147483647 - 1);
}

TEST(InprocReduction, ReduceScatterOutputMayBeThisRanksSliceOfTheInput) {
  auto comms = make_inproc_communicators(2);
  run_ranks(comms, [](Communicator& comm) {
    const Stream s = Stream::create(Device::cpu(comm.rank()));
    const Tensor input =
        Tensor::from_vector(std::vector<double>{1.0 + comm.rank(), 10.0 * (1 + comm.rank())}, Shape{2}, s);
    const Tensor mine = input.slice(comm.rank(), comm.rank() + 1);
    comm.reduce_scatter(input, mine, ReduceOp::sum, s)->wait();
    EXPECT_EQ(mine.to_vector<double>(s)[0], comm.rank() == 0 ? 3.0 : 30.0);
  });
}

}  // namespace
}  // namespace baton::comm
