// The SIMT scheduler: block barriers and warp shuffles give CUDA's results, divergent barriers and
// warp collectives with a wrong mask abort naming kernel, block and threads, schedules change the
// order of threads and blocks, and __shared__ memory is poisoned per block.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <numeric>
#include <thread>

#include "emu_test_support.h"
#include "kernels.h"

namespace emu_test {
namespace {

using SimtDeathTest = OnDevice0;

TEST(Simt, BlockSumsWithSharedMemoryBarriersAndShuffles) {
  const int blocks = 5, block = 256;
  std::vector<float> in(blocks * block);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 7) % 13) - 6.0f;
  DeviceBuffer<float> d_in(in.size()), d_out(blocks);
  d_in.upload(in);
  EMU_ASSERT_OK(block_sums(d_in.get(), d_out.get(), blocks, block, nullptr));
  const std::vector<float> out = d_out.download();
  for (int b = 0; b < blocks; ++b) {
    EXPECT_EQ(std::accumulate(in.begin() + b * block, in.begin() + (b + 1) * block, 0.0f), out[b]) << "block " << b;
  }
}

// CUDA's documented shuffle results for lane l with value 1000 + l.
int expected_shuffle(int kind, int lane, int src_lane, int delta, int lane_mask, int width) {
  const int base = lane & ~(width - 1), in_segment = lane & (width - 1);
  switch (kind) {
    case 0:
      return 1000 + base + (src_lane & (width - 1));
    case 1:
      return 1000 + (in_segment >= delta ? lane - delta : lane);
    case 2:
      return 1000 + (in_segment + delta < width ? lane + delta : lane);
    default: {
      const int src = lane ^ lane_mask;
      return 1000 + (src >= base + width ? lane : src);
    }
  }
}

TEST(Simt, ShufflesFollowCudaSemanticsForEveryWidth) {
  const int threads = 64;
  DeviceBuffer<int> d_out(4 * threads);
  for (int width : {32, 16, 8, 4, 2, 1}) {
    const int src_lane = 5, delta = 3, lane_mask = 6;
    EMU_ASSERT_OK(shuffles(d_out.get(), threads, src_lane, delta, lane_mask, width, nullptr));
    const std::vector<int> out = d_out.download();
    for (int t = 0; t < threads; ++t) {
      for (int kind = 0; kind < 4; ++kind) {
        const int lane = t % 32;
        EXPECT_EQ(expected_shuffle(kind, lane, src_lane, delta, lane_mask, width) + (t - lane), out[4 * t + kind])
            << "width " << width << " thread " << t << " shuffle " << kind;
      }
    }
  }
}

TEST(Simt, BallotCollectsThePredicateOfEveryLane) {
  DeviceBuffer<unsigned> d_out(2);
  EMU_ASSERT_OK(ballots(d_out.get(), 64, nullptr));
  unsigned expected = 1u << 31;
  for (int lane = 0; lane < 32; lane += 3) expected |= 1u << lane;
  EXPECT_EQ(std::vector<unsigned>({expected, expected}), d_out.download());
}

TEST_F(SimtDeathTest, SyncthreadsReachedBySomeThreadsAborts) {
  EXPECT_DEATH(partial_barrier(128, 100, nullptr),
               "partial_barrier_kernel launched at .*kernels.cu:[0-9]+, block \\(0,0,0\\): __syncthreads is reached by "
               "some threads.*\n.*at __syncthreads: 0-99\n.*exited: 100-127");
}

TEST_F(SimtDeathTest, ShuffleWhoseMaskNamesLanesThatDoNotReachItAborts) {
  EXPECT_DEATH(partial_shuffle(0xffffffffu, 16, nullptr),
               "partial_shuffle_kernel.*can never be released.*\n.*exited: 16-31\n.*thread 0 \\(warp 0, lane 0\\) at "
               "__shfl_sync with mask 0xffffffff");
}

TEST_F(SimtDeathTest, ShuffleWithAMaskWithoutTheCallingLaneAborts) {
  EXPECT_DEATH(partial_shuffle(0x0000ffffu, 32, nullptr),
               "thread 16 \\(lane 16\\) calls __shfl_sync with mask 0x0000ffff, which does not include its own lane");
}

TEST(Simt, ShuffleWithAMaskOfTheArrivingLanesCompletes) { EMU_ASSERT_OK(partial_shuffle(0x0000ffffu, 16, nullptr)); }

TEST(Simt, PartialBarrierOfAllThreadsCompletes) { EMU_ASSERT_OK(partial_barrier(96, 96, nullptr)); }

int last_writer_under(const char* schedule) {
  setenv("BATON_EMU_SCHEDULE", schedule, 1);
  setenv("BATON_EMU_SEED", "42", 1);
  DeviceBuffer<int> d_out(1);
  if (last_writer(d_out.get(), 64, 4, nullptr) != cudaSuccess) return -1;
  return d_out.download()[0];
}

// Settings are read once per process, so each schedule runs in a child process (no fixture: its
// SetUp would read them in the child before the statement sets the variable).
TEST(SimtScheduleDeathTest, ForwardScheduleRunsTheLastThreadOfTheLastBlockLast) {
  EXPECT_EXIT(std::exit(last_writer_under("forward") == 255 ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

TEST(SimtScheduleDeathTest, ReverseScheduleRunsThreadZeroOfBlockZeroLast) {
  EXPECT_EXIT(std::exit(last_writer_under("reverse") == 0 ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

TEST(SimtScheduleDeathTest, RandomSchedulePrintsItsSeedAndRunsAnotherOrder) {
  EXPECT_EXIT(std::exit(last_writer_under("random") != 255 ? 0 : 1), ::testing::ExitedWithCode(0),
              "random schedule, seed 42 \\(BATON_EMU_SEED=42 repeats it\\)");
}

TEST(SimtScheduleDeathTest, BadScheduleIsRefusedNamingTheVariable) {
  EXPECT_DEATH(last_writer_under("sideways"), "BATON_EMU_SCHEDULE='sideways': expected forward, reverse or random");
}

TEST(Simt, StaticSharedMemoryIsPoisonedForEveryBlock) {
  DeviceBuffer<uint32_t> d_out(3);
  EMU_ASSERT_OK(shared_before_write(d_out.get(), 3, nullptr));
  EXPECT_EQ(std::vector<uint32_t>(3, 0xFFFFFFFFu), d_out.download());
}

TEST(Simt, DynamicSharedMemoryHoldsTheLaunchBytes) {
  DeviceBuffer<float> d_out(100);
  EMU_ASSERT_OK(dynamic_shared(d_out.get(), 100, false, nullptr));
  const std::vector<float> out = d_out.download();
  for (int t = 0; t < 100; ++t) EXPECT_EQ(static_cast<float>(99 - t), out[t]);
}

TEST_F(SimtDeathTest, WritePastDynamicSharedMemoryAborts) {
  DeviceBuffer<float> d_out(64);
  EXPECT_DEATH(dynamic_shared(d_out.get(), 64, true, nullptr), "past the end of the block's dynamic shared memory");
}

TEST(Simt, HostThreadsLaunchConcurrentlyOnTheirOwnDevices) {
  auto work = [](int device, bool* ok) {
    *ok = cudaSetDevice(device) == cudaSuccess;
    std::vector<float> in(256 * 8, 1.0f);
    DeviceBuffer<float> d_in(in.size()), d_out(8);
    d_in.upload(in);
    for (int round = 0; round < 20; ++round)
      *ok = *ok && block_sums(d_in.get(), d_out.get(), 8, 256, nullptr) == cudaSuccess;
    *ok = *ok && d_out.download() == std::vector<float>(8, 256.0f);
  };
  bool ok0 = false, ok1 = false;
  std::thread t0(work, 0, &ok0), t1(work, 1, &ok1);
  t0.join();
  t1.join();
  EXPECT_TRUE(ok0);
  EXPECT_TRUE(ok1);
}

TEST(Simt, HalfAndBfloat16RoundToNearestEvenAsCuda) {
  EXPECT_EQ(0x3c00, __half_as_ushort(__float2half_rn(1.0f + 1.0f / 2048)));          // tie -> even (1.0)
  EXPECT_EQ(0x3c02, __half_as_ushort(__float2half_rn(1.0f + 3.0f / 2048)));          // tie -> even (up)
  EXPECT_EQ(0x7bff, __half_as_ushort(__float2half_rn(65519.0f)));                    // below the rounding edge
  EXPECT_EQ(0x7c00, __half_as_ushort(__float2half_rn(65520.0f)));                    // rounds to inf
  EXPECT_EQ(0x0001, __half_as_ushort(__float2half_rn(5.9604644775390625e-8f)));      // smallest subnormal
  EXPECT_EQ(0x0000, __half_as_ushort(__float2half_rn(2.98023223876953125e-8f)));     // half of it: ties to 0
  EXPECT_EQ(3.0517578125e-05f, __half2float(__ushort_as_half(0x0200)));              // subnormal back to float
  EXPECT_EQ(0x3f80, __bfloat16_as_ushort(__float2bfloat16_rn(1.00390625f)));         // tie -> even (1.0)
  EXPECT_EQ(0x3f82, __bfloat16_as_ushort(__float2bfloat16_rn(1.01171875f)));         // tie -> even (up)
  EXPECT_EQ(0x7fc0, __bfloat16_as_ushort(__float2bfloat16_rn(__builtin_nanf(""))));  // quiet NaN
  EXPECT_EQ(1.5f, __bfloat162float(__float2bfloat16_rn(1.5f)));
}

}  // namespace
}  // namespace emu_test
