// The nccl backend's failures: a peer that never issues an operation is reported by wait() and by
// the watchdog after the timeout, naming the operation, its number and the rank, and the
// communicator is aborted; an operation is not done while a peer has not issued it; bad devices.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/parallel/comm/nccl_test_support.h"

namespace baton::comm::testing {
namespace {

using std::chrono::milliseconds;

TEST(NcclFailures, WaitPastTheTimeoutAbortsAndNamesTheOperationAndRank) {
  BATON_REQUIRE_GPUS(2);
  auto comms = make_nccl_communicators(first_gpus(2));
  comms[0]->set_timeout(milliseconds(200));
  const RankDevice device(Device::cuda(0));
  const Stream s = rank_stream();
  const Tensor buffer = Tensor::from_vector(std::vector<float>{1, 2}, Shape{2}, s);
  const WorkHandle work = comms[0]->all_reduce(buffer, ReduceOp::sum, s);  // rank 1 never issues it
  const auto start = std::chrono::steady_clock::now();
  EXPECT_ERROR_MENTIONS("all_reduce #0 on rank 0 of 2 (nccl) did not complete within 200 ms", work->wait());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(work->done());
  EXPECT_ERROR_MENTIONS("nccl rank 0 of 2: the communicator was aborted: all_reduce #0 on rank 0 of 2 (nccl)",
                        comms[0]->all_reduce(buffer, ReduceOp::sum, s));
  EXPECT_ERROR_MENTIONS("the communicator was aborted", work->wait());
}

TEST(NcclFailures, WatchdogAbortsWhenNobodyWaits) {
  BATON_REQUIRE_GPUS(2);
  auto comms = make_nccl_communicators(first_gpus(2));
  comms[1]->set_timeout(milliseconds(100));
  const RankDevice device(Device::cuda(1));
  const Stream s = rank_stream();
  const Tensor buffer = Tensor::from_vector(std::vector<int32_t>{3}, Shape{1}, s);
  const WorkHandle work = comms[1]->broadcast(buffer, 0, s);  // rank 0 never issues it
  EXPECT_FALSE(work->done());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!work->done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_TRUE(work->done()) << "the watchdog did not end the operation";
  EXPECT_ERROR_MENTIONS("broadcast #0 on rank 1 of 2 (nccl) did not complete within 100 ms", work->wait());
  EXPECT_ERROR_MENTIONS("found by the watchdog", work->wait());
}

// A second operation issued behind one whose peer never comes: on a GPU it is queued, on the emulated
// GPU the issuing thread waits inside NCCL; either way the watchdog ends it at the timeout.
TEST(NcclFailures, AnOperationQueuedBehindAHungOneFailsAtTheTimeout) {
  BATON_REQUIRE_GPUS(2);
  auto comms = make_nccl_communicators(first_gpus(2));
  comms[0]->set_timeout(milliseconds(300));
  const RankDevice device(Device::cuda(0));
  const Stream s = rank_stream();
  const Tensor a = Tensor::from_vector(std::vector<float>{1}, Shape{1}, s);
  const Tensor b = Tensor::from_vector(std::vector<float>{2}, Shape{1}, s);
  const WorkHandle first = comms[0]->all_reduce(a, ReduceOp::sum, s);  // rank 1 never issues it
  const auto start = std::chrono::steady_clock::now();
  const std::string message = baton::testing::error_message([&] { comms[0]->all_reduce(b, ReduceOp::sum, s)->wait(); });
  EXPECT_NE(message.find("all_reduce #0 on rank 0 of 2 (nccl) did not complete within 300 ms"), std::string::npos)
      << message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(first->done());
}

// The operation is not done while the peer has not issued it, and completes when it does.
TEST(NcclFailures, NotDoneUntilEveryRankIssuedIt) {
  BATON_REQUIRE_GPUS(2);
  auto comms = make_nccl_communicators(first_gpus(2));
  WorkHandle first;
  {
    const RankDevice device(Device::cuda(0));
    const Stream s = rank_stream();
    const Tensor a = Tensor::from_vector(std::vector<double>{0.5}, Shape{1}, s);
    first = comms[0]->all_reduce(a, ReduceOp::sum, s);
    std::this_thread::sleep_for(milliseconds(50));
    EXPECT_FALSE(first->done());
    EXPECT_FALSE(first->times().finished.has_value());
    std::thread peer([&] {
      const RankDevice peer_device(Device::cuda(1));
      const Stream ps = rank_stream();
      const Tensor b = Tensor::from_vector(std::vector<double>{0.25}, Shape{1}, ps);
      comms[1]->all_reduce(b, ReduceOp::sum, ps)->wait();
      EXPECT_EQ(b.to_vector<double>(ps)[0], 0.75);
    });
    first->wait();
    peer.join();
    EXPECT_EQ(a.to_vector<double>(s)[0], 0.75);
    ASSERT_TRUE(first->times().started && first->times().finished);
    EXPECT_LE(*first->times().started, *first->times().finished);
  }
}

// A send and its receive are queued until a wait; polling done() issues them too.
TEST(NcclFailures, PollingDoneIssuesQueuedSendsAndReceives) {
  BATON_REQUIRE_GPUS(2);
  auto comms = make_nccl_communicators(first_gpus(2));
  run_nccl_ranks(comms, [](Communicator& comm) {
    comm.set_timeout(std::chrono::seconds(3));
    const Stream s = rank_stream();
    const Tensor message = Tensor::from_vector(std::vector<float>{1.25f, -2}, Shape{2}, s);
    const Tensor into = Tensor::from_vector(std::vector<float>{0, 0}, Shape{2}, s);
    const WorkHandle work = comm.rank() == 0 ? comm.send(message, 1, s) : comm.recv(into, 0, s);
    const auto start = std::chrono::steady_clock::now();
    while (!work->done()) std::this_thread::sleep_for(milliseconds(1));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << where(comm);
    work->wait();  // throws if the watchdog had to end it
    if (comm.rank() == 1) {
      EXPECT_EQ(into.to_vector<float>(s), (std::vector<float>{1.25f, -2}));
    }
  });
}

TEST(NcclFailures, DevicesAreChecked) {
  EXPECT_ERROR_MENTIONS("cpu:0 is not a CUDA device", make_nccl_communicators({Device::cpu()}));
  BATON_REQUIRE_GPUS(2);
  EXPECT_ERROR_MENTIONS("cuda:1 is listed twice", make_nccl_communicators({Device::cuda(1), Device::cuda(1)}));
  EXPECT_ERROR_MENTIONS("cuda:99 does not exist", make_nccl_communicators({Device::cuda(0), Device::cuda(99)}));
  auto comms = make_nccl_communicators(first_gpus(2));
  const Tensor on_1 = Tensor::empty(Shape{2}, DType::f32, Stream::create(Device::cuda(1)));
  EXPECT_ERROR_MENTIONS(
      "all_reduce #0 on rank 0 of 2 (nccl): buffer is on cuda:1: the nccl communicator of rank 0 moves tensors of "
      "cuda:0 only",
      comms[0]->all_reduce(on_1, ReduceOp::sum, Stream::create(Device::cuda(0))));
}

}  // namespace
}  // namespace baton::comm::testing
