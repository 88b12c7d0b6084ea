// The in-process communicator's failure behaviour: timeouts that name the missing rank (never a hang),
// the abort reaching every rank, mismatches between ranks, bad arguments, and the overlap with the caller.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "parallel/comm/collective_args.h"
#include "parallel/comm/inproc_communicator.h"
#include "tests/parallel/comm/comm_checks.h"

namespace baton::comm {
namespace {

using namespace std::chrono_literals;
using testing::run_ranks;
using Clock = std::chrono::steady_clock;

Stream cpu_stream(int index = 0) { return Stream::create(Device::cpu(index)); }

Tensor floats(std::vector<float> values, const Stream& s) {
  const auto n = static_cast<int64_t>(values.size());
  return Tensor::from_vector(values, Shape{n}, s);
}

// Rank 0's all_reduce completes only when rank 1 issues its own: right after issue it is not done,
// and the caller is free to compute meanwhile (the overlap data parallelism needs).
TEST(InprocOverlap, IssueReturnsBeforeTheReductionCompletes) {
  auto comms = make_inproc_communicators(2);
  const Stream s0 = cpu_stream(0);
  const Stream s1 = cpu_stream(1);
  const Tensor a = floats({1, 2, 3}, s0);
  const Tensor b = floats({10, 20, 30}, s1);
  const WorkHandle first = comms[0]->all_reduce(a, ReduceOp::sum, s0);
  EXPECT_FALSE(first->done());
  std::this_thread::sleep_for(20ms);  // rank 0 "computes"; its operation waits for rank 1
  EXPECT_FALSE(first->done());
  const WorkHandle second = comms[1]->all_reduce(b, ReduceOp::sum, s1);
  first->wait();
  second->wait();
  EXPECT_EQ(a.to_vector<float>(s0), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(b.to_vector<float>(s1), (std::vector<float>{11, 22, 33}));
}

TEST(InprocTimeout, WaitThrowsWithinTheTimeoutNamingTheMissingRank) {
  auto comms = make_inproc_communicators(3);
  for (auto& c : comms) c->set_timeout(200ms);
  std::string message;
  const auto start = Clock::now();
  run_ranks(comms, [&](Communicator& comm) {
    if (comm.rank() == 2) return;  // never calls
    const Tensor t = floats({1}, cpu_stream(comm.rank()));
    const WorkHandle work = comm.all_reduce(t, ReduceOp::sum, cpu_stream(comm.rank()));
    const std::string m = baton::testing::error_message([&] { work->wait(); });
    if (comm.rank() == 0) message = m;
  });
  const auto elapsed = Clock::now() - start;
  EXPECT_NE(message.find("all_reduce #0"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 2 did not issue it"), std::string::npos) << message;
  EXPECT_GE(elapsed, 150ms);
  EXPECT_LT(elapsed, 2s) << "the timeout is 200 ms";
  // The group is aborted: the late rank's operations fail at once with the reason.
  const Tensor late = floats({1}, cpu_stream(2));
  const std::string late_message =
      baton::testing::error_message([&] { comms[2]->all_reduce(late, ReduceOp::sum, cpu_stream(2))->wait(); });
  EXPECT_NE(late_message.find("aborted"), std::string::npos) << late_message;
  EXPECT_NE(late_message.find("rank 2 did not issue it"), std::string::npos) << late_message;
}

TEST(InprocTimeout, RecvFromARankThatNeverSends) {
  auto comms = make_inproc_communicators(2);
  comms[1]->set_timeout(200ms);
  const Tensor into = floats({0, 0}, cpu_stream(1));
  const std::string message = baton::testing::error_message([&] { comms[1]->recv(into, 0, cpu_stream(1))->wait(); });
  EXPECT_NE(message.find("recv #0 from rank 0 on rank 1 of 2 (inproc)"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0 did not send it"), std::string::npos) << message;
}

TEST(InprocTimeout, SendThatIsNeverReceived) {
  auto comms = make_inproc_communicators(2);
  comms[0]->set_timeout(200ms);
  const Tensor t = floats({1, 2}, cpu_stream(0));
  const std::string message = baton::testing::error_message([&] { comms[0]->send(t, 1, cpu_stream(0))->wait(); });
  EXPECT_NE(message.find("send #0 to rank 1 on rank 0 of 2 (inproc) was not received within 200 ms"), std::string::npos)
      << message;
  EXPECT_NE(message.find("rank 1 has not received it"), std::string::npos) << message;
}

TEST(InprocTimeout, BarrierWithAMissingRankThrows) {
  auto comms = make_inproc_communicators(2);
  comms[0]->set_timeout(100ms);
  EXPECT_ERROR_MENTIONS("rank 1 did not issue it", comms[0]->barrier());
}

TEST(InprocTimeout, DestroyingWithAPendingOperationDoesNotHang) {
  const auto start = Clock::now();
  {
    auto comms = make_inproc_communicators(2);
    comms[0]->set_timeout(200ms);
    const Tensor t = floats({1}, cpu_stream(0));
    comms[0]->all_reduce(t, ReduceOp::sum, cpu_stream(0));  // rank 1 never joins; nobody waits
  }
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST(InprocMismatch, EveryRankGetsTheErrorNamingBothShapes) {
  auto comms = make_inproc_communicators(2);
  run_ranks(comms, [&](Communicator& comm) {
    const Stream s = cpu_stream(comm.rank());
    const Tensor t = comm.rank() == 0 ? floats({1, 2, 3}, s) : floats({1, 2}, s);
    EXPECT_ERROR_MENTIONS("all_reduce #0 (inproc): rank 1 passed f32 [2] where rank 0 passed f32 [3]",
                          comm.all_reduce(t, ReduceOp::sum, s)->wait());
    // A mismatch is not a failure of the group: the next collective works.
    const Tensor ok = floats({1}, s);
    comm.all_reduce(ok, ReduceOp::sum, s)->wait();
    EXPECT_EQ(ok.to_vector<float>(s)[0], 2.0f);
  });
}

TEST(InprocMismatch, DifferentCollectivesAndRoots) {
  auto comms = make_inproc_communicators(2);
  run_ranks(comms, [&](Communicator& comm) {
    const Stream s = cpu_stream(comm.rank());
    const Tensor t = floats({1}, s);
    const std::string kinds = baton::testing::error_message([&] {
      if (comm.rank() == 0) comm.all_reduce(t, ReduceOp::sum, s)->wait();
      if (comm.rank() == 1) comm.broadcast(t, 0, s)->wait();
    });
    EXPECT_NE(kinds.find("collective #0 (inproc): rank 1 issued broadcast where rank 0 issued all_reduce"),
              std::string::npos)
        << kinds;
    EXPECT_ERROR_MENTIONS("rank 1 named root 1 where rank 0 named root 0", comm.broadcast(t, comm.rank(), s)->wait());
    EXPECT_ERROR_MENTIONS("rank 1 asked for mean where rank 0 asked for sum",
                          comm.all_reduce(t, comm.rank() == 0 ? ReduceOp::sum : ReduceOp::mean, s)->wait());
  });
}

TEST(InprocMismatch, SendAndRecvOfDifferentShapes) {
  auto comms = make_inproc_communicators(2);
  run_ranks(comms, [&](Communicator& comm) {
    const Stream s = cpu_stream(comm.rank());
    if (comm.rank() == 0) {
      EXPECT_ERROR_MENTIONS("rank 0 sent f32 [3] (send #0) into f32 [2]",
                            comm.send(floats({1, 2, 3}, s), 1, s)->wait());
    } else {
      EXPECT_ERROR_MENTIONS("recv #0 from rank 0 on rank 1 of 2 (inproc): rank 0 sent f32 [3] (send #0) into f32 [2]",
                            comm.recv(floats({0, 0}, s), 0, s)->wait());
    }
  });
}

TEST(InprocArguments, BadTensorsAndSizesAreRefusedAtIssue) {
  auto comms = make_inproc_communicators(2);
  testing::check_refused_arguments(*comms[0]);
  EXPECT_ERROR_MENTIONS("size must be at least 1", make_inproc_communicators(0));
  // Refused calls took no sequence number: the group still works.
  run_ranks(comms, [](Communicator& c) { testing::check_all_reduce(c, DType::f32, ReduceOp::sum, 5, 3); });
}

TEST(InprocArguments, TimeoutFromTheEnvironment) {
  ASSERT_EQ(setenv("BATON_COMM_TIMEOUT", "0.25", 1), 0);
  EXPECT_EQ(default_timeout(), 250ms);
  ASSERT_EQ(setenv("BATON_COMM_TIMEOUT", "soon", 1), 0);
  EXPECT_ERROR_MENTIONS("BATON_COMM_TIMEOUT='soon': expected a positive number of seconds", default_timeout());
  ASSERT_EQ(setenv("BATON_COMM_TIMEOUT", "-1", 1), 0);
  EXPECT_ERROR_MENTIONS("BATON_COMM_TIMEOUT='-1'", default_timeout());
  ASSERT_EQ(unsetenv("BATON_COMM_TIMEOUT"), 0);
  EXPECT_EQ(default_timeout(), 60s);
}

TEST(InprocArguments, ChunkRangesCoverEveryElementOnce) {
  for (int64_t numel : {0, 1, 5, 7, 1031}) {
    for (int parts = 1; parts <= 5; ++parts) {
      int64_t next = 0;
      for (int p = 0; p < parts; ++p) {
        const ElementRange r = chunk_range(numel, parts, p);
        EXPECT_EQ(r.begin, next);
        EXPECT_LE(r.count, numel / parts + 1);
        next = r.begin + r.count;
      }
      EXPECT_EQ(next, numel);
    }
  }
}

}  // namespace
}  // namespace baton::comm
