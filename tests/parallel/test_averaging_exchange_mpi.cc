// The model-averaging exchange across processes under mpiexec (2 and 4 ranks), float64: the ring,
// the tree by host (one node here) and the tree over nodes of two ranks give every rank the mean of
// every rank's buffer to rounding, the same bits on every rank.
#include <gtest/gtest.h>

#include "parallel/replicas/averaging_exchange.h"
#include "tests/parallel/comm/mpi_test_env.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using baton::testing::all_close;
using baton::testing::random_tensor;
using baton::testing::to_doubles;
using comm::testing::mpi_world;

TEST(AveragingExchangeMpi, RingAndTreeGiveTheMeanOnEveryRank) {
  comm::Communicator& world = mpi_world();
  const int n = world.size(), rank = world.rank();
  const Stream host = Stream::create(Device::cpu());
  std::vector<double> mean(29, 0.0);
  for (int r = 0; r < n; ++r) {
    const std::vector<double> v =
        to_doubles(random_tensor(Shape{29}, DType::f64, host, 40 + static_cast<uint64_t>(r)), host);
    for (size_t i = 0; i < mean.size(); ++i) mean[i] += v[i] / n;
  }
  std::vector<int> pairs;
  for (int r = 0; r < n; ++r) pairs.push_back(r / 2);
  EXPECT_EQ(nodes_by_host(world), std::vector<int>(static_cast<size_t>(n), 0));
  const std::vector<std::pair<ExchangeKind, std::vector<int>>> cases = {
      {ExchangeKind::ring, {}}, {ExchangeKind::tree, {}}, {ExchangeKind::tree, pairs}};
  for (size_t c = 0; c < cases.size(); ++c) {
    Context ctx(Device::cpu());
    AveragingExchange ex(world, cases[c].first, cases[c].second);
    const Tensor buffer = random_tensor(Shape{29}, DType::f64, ctx.stream(), 40 + static_cast<uint64_t>(rank));
    ex.all_reduce(ctx, buffer, comm::ReduceOp::mean);
    const std::vector<double> got = to_doubles(buffer, ctx.stream());
    EXPECT_TRUE(all_close(got, mean, 1e-14, 1e-15)) << "case " << c << " on rank " << rank;
    // Rank 0's bits everywhere.
    const Tensor zero = Tensor::from_vector<double>(got, Shape{29}, ctx.stream());
    world.broadcast(zero, 0, ctx.stream())->wait();
    EXPECT_EQ(to_doubles(zero, ctx.stream()), got) << "case " << c << " on rank " << rank;
  }
}

}  // namespace
}  // namespace baton::parallel
