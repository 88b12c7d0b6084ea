// The emulated NCCL's rules: one thread driving several devices with groups, non-blocking
// initialisation, pending collectives seen by queries, later work and synchronisations, abort,
// and the fatal errors of mismatched collectives and of waits that would hang on a GPU.
#include <atomic>
#include <chrono>
#include <cstdlib>

#include "kernels.h"
#include "nccl_test_support.h"

namespace emu_test {
namespace {

// Communicators of devices 0..n-1 made by ncclCommInitAll, a non-blocking stream per device.
class OneThreadRanks : public ::testing::Test {
 protected:
  void make(int ranks) {
    comms.assign(static_cast<size_t>(ranks), nullptr);
    ASSERT_EQ(ncclSuccess, ncclCommInitAll(comms.data(), ranks, nullptr));
    for (int r = 0; r < ranks; ++r) {
      ASSERT_EQ(cudaSuccess, cudaSetDevice(r));
      cudaStream_t stream = nullptr;
      ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      streams.push_back(stream);
    }
    ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  }
  void TearDown() override {
    for (size_t r = 0; r < streams.size(); ++r) {
      cudaSetDevice(static_cast<int>(r));
      cudaStreamDestroy(streams[r]);
    }
    for (ncclComm_t comm : comms) {
      if (comm != nullptr) ncclCommDestroy(comm);
    }
    cudaSetDevice(0);
  }
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
};
using OneThreadRanksDeathTest = OneThreadRanks;

// One thread drives four devices: the five collectives and a ring of sends and receives, each
// rank's calls inside one group.
TEST_F(OneThreadRanks, GroupedCollectivesOnFourDevicesFromOneThread) {
  make(4);
  using Buffer = std::unique_ptr<RankBuffer<float>>;
  std::vector<Buffer> sums, gathered, scattered, broadcast, ring_out, ring_in;
  std::vector<std::vector<float>> inputs;
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(cudaSuccess, cudaSetDevice(r));
    inputs.push_back(random_values<float>(5, 10u + static_cast<uint32_t>(r)));
    sums.push_back(std::make_unique<RankBuffer<float>>(inputs.back()));
    gathered.push_back(std::make_unique<RankBuffer<float>>(20));
    scattered.push_back(std::make_unique<RankBuffer<float>>(5));
    broadcast.push_back(std::make_unique<RankBuffer<float>>(inputs.back()));
    ring_out.push_back(std::make_unique<RankBuffer<float>>(inputs.back()));
    ring_in.push_back(std::make_unique<RankBuffer<float>>(5));
  }
  NCCL_ASSERT_OK(ncclGroupStart());
  for (int r = 0; r < 4; ++r) {
    NCCL_ASSERT_OK(ncclAllReduce(sums[r]->get(), sums[r]->get(), 5, ncclFloat32, ncclSum, comms[r], streams[r]));
    NCCL_ASSERT_OK(ncclAllGather(sums[r]->get(), gathered[r]->get(), 5, ncclFloat32, comms[r], streams[r]));
    NCCL_ASSERT_OK(
        ncclReduceScatter(gathered[r]->get(), scattered[r]->get(), 5, ncclFloat32, ncclSum, comms[r], streams[r]));
    NCCL_ASSERT_OK(ncclBroadcast(broadcast[r]->get(), broadcast[r]->get(), 5, ncclFloat32, 2, comms[r], streams[r]));
    NCCL_ASSERT_OK(ncclSend(ring_out[r]->get(), 5, ncclFloat32, (r + 1) % 4, comms[r], streams[r]));
    NCCL_ASSERT_OK(ncclRecv(ring_in[r]->get(), 5, ncclFloat32, (r + 3) % 4, comms[r], streams[r]));
  }
  NCCL_ASSERT_OK(ncclGroupEnd());
  std::vector<float> sum(5), all, four_sums(5);
  for (size_t i = 0; i < 5; ++i) {
    sum[i] = ((inputs[0][i] + inputs[1][i]) + inputs[2][i]) + inputs[3][i];
    four_sums[i] = ((sum[i] + sum[i]) + sum[i]) + sum[i];
  }
  for (int r = 0; r < 4; ++r) all.insert(all.end(), sum.begin(), sum.end());
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(cudaSuccess, cudaSetDevice(r));
    EXPECT_EQ(bytes_of(sum), bytes_of(sums[r]->download(streams[r]))) << "rank " << r;
    EXPECT_EQ(bytes_of(all), bytes_of(gathered[r]->download(streams[r]))) << "rank " << r;
    EXPECT_EQ(bytes_of(four_sums), bytes_of(scattered[r]->download(streams[r]))) << "rank " << r;
    EXPECT_EQ(bytes_of(inputs[2]), bytes_of(broadcast[r]->download(streams[r]))) << "rank " << r;
    EXPECT_EQ(bytes_of(inputs[(r + 3) % 4]), bytes_of(ring_in[r]->download(streams[r]))) << "rank " << r;
  }
  for (int r = 0; r < 4; ++r) {  // buffers are freed with their device current
    ASSERT_EQ(cudaSuccess, cudaSetDevice(r));
    for (auto* buffers : {&sums, &gathered, &scattered, &broadcast, &ring_out, &ring_in}) (*buffers)[r].reset();
  }
}

TEST(NcclInit, GroupedInitRankAndNonBlockingInitFromOneThread) {
  ncclUniqueId id;
  NCCL_ASSERT_OK(ncclGetUniqueId(&id));
  ncclComm_t grouped[2] = {nullptr, nullptr};
  NCCL_ASSERT_OK(ncclGroupStart());
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(cudaSuccess, cudaSetDevice(r));
    NCCL_ASSERT_OK(ncclCommInitRank(&grouped[r], 2, id, r));
  }
  NCCL_ASSERT_OK(ncclGroupEnd());
  int rank = -1, device = -1;
  NCCL_ASSERT_OK(ncclCommUserRank(grouped[1], &rank));
  NCCL_ASSERT_OK(ncclCommCuDevice(grouped[1], &device));
  EXPECT_EQ(1, rank);
  EXPECT_EQ(1, device);

  NCCL_ASSERT_OK(ncclGetUniqueId(&id));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t lazy[2] = {nullptr, nullptr};
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  EXPECT_EQ(ncclInProgress, ncclCommInitRankConfig(&lazy[0], 2, id, 0, &config));
  ncclResult_t state = ncclSuccess;
  NCCL_ASSERT_OK(ncclCommGetAsyncError(lazy[0], &state));
  EXPECT_EQ(ncclInProgress, state);
  ASSERT_EQ(cudaSuccess, cudaSetDevice(1));
  const ncclResult_t last = ncclCommInitRankConfig(&lazy[1], 2, id, 1, &config);
  EXPECT_TRUE(last == ncclSuccess || last == ncclInProgress) << ncclGetErrorString(last);
  NCCL_ASSERT_OK(ncclCommGetAsyncError(lazy[0], &state));
  EXPECT_EQ(ncclSuccess, state);
  for (ncclComm_t comm : {grouped[0], grouped[1], lazy[0], lazy[1]}) NCCL_ASSERT_OK(ncclCommDestroy(comm));
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
}

TEST_F(OneThreadRanks, QueriesAnswerNotReadyWhileAPeerHasNotIssued) {
  make(2);
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  RankBuffer<float> a(std::vector<float>{1.5f, 2});
  cudaEvent_t after = nullptr;
  ASSERT_EQ(cudaSuccess, cudaEventCreate(&after));
  NCCL_ASSERT_OK(ncclAllReduce(a.get(), a.get(), 2, ncclFloat32, ncclSum, comms[0], streams[0]));
  ASSERT_EQ(cudaSuccess, cudaEventRecord(after, streams[0]));  // does not block
  EXPECT_EQ(cudaErrorNotReady, cudaStreamQuery(streams[0]));
  EXPECT_EQ(cudaErrorNotReady, cudaEventQuery(after));
  EXPECT_EQ(cudaSuccess, cudaGetLastError());  // not-ready is not an error
  ASSERT_EQ(cudaSuccess, cudaSetDevice(1));
  RankBuffer<float> b(std::vector<float>{0.25f, -4});
  NCCL_ASSERT_OK(ncclAllReduce(b.get(), b.get(), 2, ncclFloat32, ncclSum, comms[1], streams[1]));
  EXPECT_EQ(cudaSuccess, cudaStreamQuery(streams[0]));
  EXPECT_EQ(cudaSuccess, cudaEventQuery(after));
  EXPECT_EQ((std::vector<float>{1.75f, -2}), b.download(streams[1]));
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  EXPECT_EQ((std::vector<float>{1.75f, -2}), a.download(streams[0]));
  EXPECT_EQ(cudaSuccess, cudaEventDestroy(after));
}

// A kernel enqueued after a pending all_reduce (here on another stream ordered by an event) blocks
// its host thread until the peer issued its part, and then reads the reduced values.
TEST_F(OneThreadRanks, LaterKernelWaitsForThePeerAndReadsTheReducedData) {
  make(2);
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  RankBuffer<float> a(std::vector<float>{1, 2, 3}), copied(3);
  cudaStream_t other = nullptr;
  cudaEvent_t reduced = nullptr;
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  ASSERT_EQ(cudaSuccess, cudaEventCreateWithFlags(&reduced, cudaEventDisableTiming));
  NCCL_ASSERT_OK(ncclAllReduce(a.get(), a.get(), 3, ncclFloat32, ncclSum, comms[0], streams[0]));
  ASSERT_EQ(cudaSuccess, cudaEventRecord(reduced, streams[0]));
  ASSERT_EQ(cudaSuccess, cudaStreamWaitEvent(other, reduced, 0));
  std::atomic<bool> peer_issued{false};
  std::thread peer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_EQ(cudaSuccess, cudaSetDevice(1));
    RankBuffer<float> b(std::vector<float>{10, 20, 30});
    peer_issued = true;
    NCCL_ASSERT_OK(ncclAllReduce(b.get(), b.get(), 3, ncclFloat32, ncclSum, comms[1], streams[1]));
    EXPECT_EQ((std::vector<float>{11, 22, 33}), b.download(streams[1]));
  });
  ASSERT_EQ(cudaSuccess, copy_kernel(a.get(), copied.get(), 3, other));
  EXPECT_TRUE(peer_issued.load()) << "the kernel ran before the all_reduce could complete";
  peer.join();
  EXPECT_EQ((std::vector<float>{11, 22, 33}), copied.download(other));
  EXPECT_EQ(cudaSuccess, cudaEventDestroy(reduced));
  EXPECT_EQ(cudaSuccess, cudaStreamDestroy(other));
}

TEST_F(OneThreadRanks, AbortReleasesAHostWaitingForThePeer) {
  make(2);
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  RankBuffer<float> a(std::vector<float>{1});
  NCCL_ASSERT_OK(ncclAllReduce(a.get(), a.get(), 1, ncclFloat32, ncclSum, comms[0], streams[0]));
  std::atomic<bool> released{false};
  std::thread waiter([&] {
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(streams[0]));
    released = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(released.load());
  NCCL_ASSERT_OK(ncclCommAbort(comms[0]));
  comms[0] = nullptr;
  waiter.join();
  EXPECT_TRUE(released.load());
  // The peer's later operations fail at once.
  ASSERT_EQ(cudaSuccess, cudaSetDevice(1));
  RankBuffer<float> b(std::vector<float>{2});
  NCCL_ASSERT_OK(ncclAllReduce(b.get(), b.get(), 1, ncclFloat32, ncclSum, comms[1], streams[1]));
  EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(streams[1]));
  ncclResult_t error = ncclSuccess;
  NCCL_ASSERT_OK(ncclCommGetAsyncError(comms[1], &error));
  EXPECT_EQ(ncclRemoteError, error);
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
}

TEST_F(OneThreadRanksDeathTest, MismatchedCollectivesAreReportedNamingBothRanks) {
  make(2);
  RankBuffer<float> a(8);
  EXPECT_DEATH(
      {
        NCCL_ASSERT_OK(ncclAllReduce(a.get(), a.get(), 4, ncclFloat32, ncclSum, comms[0], streams[0]));
        cudaSetDevice(1);
        RankBuffer<float> b(8);
        NCCL_ASSERT_OK(ncclAllReduce(b.get(), b.get(), 8, ncclFloat32, ncclSum, comms[1], streams[1]));
      },
      "ncclAllReduce: collective #0 of communicator [0-9]+ \\(2 ranks\\) does not match across ranks: rank 0 "
      "issued all_reduce of 4 float32 \\(sum\\), rank 1 issued all_reduce of 8 float32 \\(sum\\)");
}

TEST(NcclHangDeathTest, AWaitForAPeerThatNeverIssuesIsReportedInsteadOfHanging) {
  ASSERT_EQ(0, setenv("BATON_EMU_HANG_SECONDS", "0.3", 1));  // read by the death test's fresh child
  EXPECT_DEATH(
      {
        ncclComm_t comms[2];
        if (ncclCommInitAll(comms, 2, nullptr) != ncclSuccess) std::abort();
        RankBuffer<float> a(4);
        if (ncclAllReduce(a.get(), a.get(), 4, ncclFloat32, ncclSum, comms[0], nullptr) != ncclSuccess) std::abort();
        cudaDeviceSynchronize();
      },
      "a device synchronisation: would hang: all_reduce #0 of communicator [0-9]+ \\(2 ranks\\) is waiting for "
      "ranks 1 to issue it");
  unsetenv("BATON_EMU_HANG_SECONDS");
}

}  // namespace
}  // namespace emu_test
