// The emulated NCCL's collectives on 2 and 4 emulated devices, one host thread per rank: every
// result compared byte for byte with the reduction written out here (rank order, each step rounded
// to the element type as NCCL does, ncclAvg as NCCL's pre-multiplied sum for floating types).
#include <mutex>

#include "nccl_test_support.h"

namespace emu_test {
namespace {

constexpr size_t kCount = 37;  // odd, so no rank's slice lines up with anything

template <typename T>
T scaled(T v, int ranks) {
  if constexpr (std::is_same_v<T, double>) {
    return v * (1.0 / ranks);
  } else {
    return T(float(v) * float(T(1.0f / static_cast<float>(ranks))));
  }
}

// The reduction of inputs[r][offset + i] over r, in rank order.
template <typename T>
std::vector<T> expected_reduction(const std::vector<std::vector<T>>& inputs, size_t offset, size_t count, bool mean) {
  const int ranks = static_cast<int>(inputs.size());
  std::vector<T> out(count);
  for (size_t i = 0; i < count; ++i) {
    auto load = [&](int r) {
      const T v = inputs[static_cast<size_t>(r)][offset + i];
      if constexpr (!std::is_integral_v<T>) return mean ? scaled(v, ranks) : v;
      return v;
    };
    T acc = load(0);
    for (int r = 1; r < ranks; ++r) acc = add(acc, load(r));
    if constexpr (std::is_integral_v<T>) {
      if (mean) acc = static_cast<T>(acc / ranks);
    }
    out[i] = acc;
  }
  return out;
}

template <typename T>
class NcclCollectives : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double, __half, __nv_bfloat16, int32_t, int64_t>;
TYPED_TEST_SUITE(NcclCollectives, ElementTypes);

TYPED_TEST(NcclCollectives, AllFiveMatchTheRankOrderResultOn2And4Devices) {
  using T = TypeParam;
  const ncclDataType_t type = nccl_type<T>();
  for (int ranks : {2, 4}) {
    SCOPED_TRACE("ranks " + std::to_string(ranks));
    std::vector<std::vector<T>> inputs, scatter_inputs;
    for (int r = 0; r < ranks; ++r) {
      inputs.push_back(random_values<T>(kCount, 100u + static_cast<uint32_t>(r)));
      scatter_inputs.push_back(random_values<T>(kCount * static_cast<size_t>(ranks), 200u + static_cast<uint32_t>(r)));
    }
    std::vector<T> gathered;
    for (const auto& input : inputs) gathered.insert(gathered.end(), input.begin(), input.end());
    const int root = ranks - 1;
    on_rank_threads(ranks, [&](int r, ncclComm_t comm, cudaStream_t stream) {
      const auto& mine = inputs[static_cast<size_t>(r)];
      RankBuffer<T> sum(mine), mean(mine), broadcast(mine), gather_out(kCount * static_cast<size_t>(ranks));
      RankBuffer<T> gather_in(mine), scatter_in(scatter_inputs[static_cast<size_t>(r)]), scatter_out(kCount);
      NCCL_ASSERT_OK(ncclAllReduce(sum.get(), sum.get(), kCount, type, ncclSum, comm, stream));
      NCCL_ASSERT_OK(ncclAllReduce(mean.get(), mean.get(), kCount, type, ncclAvg, comm, stream));
      NCCL_ASSERT_OK(ncclBroadcast(broadcast.get(), broadcast.get(), kCount, type, root, comm, stream));
      NCCL_ASSERT_OK(ncclAllGather(gather_in.get(), gather_out.get(), kCount, type, comm, stream));
      NCCL_ASSERT_OK(ncclReduceScatter(scatter_in.get(), scatter_out.get(), kCount, type, ncclSum, comm, stream));
      EXPECT_EQ(bytes_of(expected_reduction(inputs, 0, kCount, false)), bytes_of(sum.download(stream))) << "rank " << r;
      EXPECT_EQ(bytes_of(expected_reduction(inputs, 0, kCount, true)), bytes_of(mean.download(stream))) << "rank " << r;
      EXPECT_EQ(bytes_of(inputs[static_cast<size_t>(root)]), bytes_of(broadcast.download(stream))) << "rank " << r;
      EXPECT_EQ(bytes_of(gathered), bytes_of(gather_out.download(stream))) << "rank " << r;
      EXPECT_EQ(bytes_of(expected_reduction(scatter_inputs, static_cast<size_t>(r) * kCount, kCount, false)),
                bytes_of(scatter_out.download(stream)))
          << "rank " << r;
    });
  }
}

using NcclPointToPoint = ::testing::Test;

TEST_F(NcclPointToPoint, RingOfSendsAndReceivesInGroupsFromOneThreadPerRank) {
  const int ranks = 4;
  on_rank_threads(ranks, [&](int r, ncclComm_t comm, cudaStream_t stream) {
    const int next = (r + 1) % ranks, previous = (r + ranks - 1) % ranks;
    RankBuffer<float> out(random_values<float>(kCount, 300u + static_cast<uint32_t>(r))), in(kCount);
    RankBuffer<float> out2(random_values<float>(3, 400u + static_cast<uint32_t>(r))), in2(3);
    for (int round = 0; round < 2; ++round) {  // the n-th send meets the n-th receive
      const RankBuffer<float>& source = round == 0 ? out : out2;
      const RankBuffer<float>& target = round == 0 ? in : in2;
      const size_t count = round == 0 ? kCount : 3;
      NCCL_ASSERT_OK(ncclGroupStart());
      NCCL_ASSERT_OK(ncclSend(source.get(), count, ncclFloat32, next, comm, stream));
      NCCL_ASSERT_OK(ncclRecv(target.get(), count, ncclFloat32, previous, comm, stream));
      NCCL_ASSERT_OK(ncclGroupEnd());
    }
    EXPECT_EQ(bytes_of(random_values<float>(kCount, 300u + static_cast<uint32_t>(previous))),
              bytes_of(in.download(stream)));
    EXPECT_EQ(bytes_of(random_values<float>(3, 400u + static_cast<uint32_t>(previous))),
              bytes_of(in2.download(stream)));
  });
}

TEST_F(NcclPointToPoint, SplitFormsCommunicatorsRankedByKeyAndNoColorGetsNull) {
  const int ranks = 4;
  std::mutex lock;
  std::vector<int> new_rank(ranks, -9), new_size(ranks, -9);
  on_rank_threads(ranks, [&](int r, ncclComm_t comm, cudaStream_t stream) {
    // Ranks 0 and 2 form one communicator ranked in reverse (key -r), 1 stays out, 3 is alone.
    const int color = r == 1 ? NCCL_SPLIT_NOCOLOR : (r == 3 ? 7 : 0);
    ncclComm_t part = reinterpret_cast<ncclComm_t>(&lock);  // overwritten by the split
    NCCL_ASSERT_OK(ncclCommSplit(comm, color, -r, &part, nullptr));
    if (color == NCCL_SPLIT_NOCOLOR) {
      EXPECT_EQ(nullptr, part);
      return;
    }
    int rank = -1, size = -1, device = -1;
    NCCL_ASSERT_OK(ncclCommUserRank(part, &rank));
    NCCL_ASSERT_OK(ncclCommCount(part, &size));
    NCCL_ASSERT_OK(ncclCommCuDevice(part, &device));
    EXPECT_EQ(r, device);
    RankBuffer<int32_t> value(std::vector<int32_t>{r + 1});
    NCCL_ASSERT_OK(ncclAllReduce(value.get(), value.get(), 1, ncclInt32, ncclSum, part, stream));
    EXPECT_EQ(r == 3 ? 4 : 1 + 3, value.download(stream)[0]);
    NCCL_ASSERT_OK(ncclCommDestroy(part));
    std::lock_guard<std::mutex> guard(lock);
    new_rank[static_cast<size_t>(r)] = rank;
    new_size[static_cast<size_t>(r)] = size;
  });
  EXPECT_EQ((std::vector<int>{1, -9, 0, 0}), new_rank);
  EXPECT_EQ((std::vector<int>{2, -9, 2, 1}), new_size);
}

}  // namespace
}  // namespace emu_test
