// The model-averaging exchange on in-process communicators, float64: the ring and the node-shaped
// tree give every rank the sum (or mean) of every rank's buffer to rounding, the same bits on every
// rank, for 1 to 5 ranks, node layouts of one node, pairs, alternating and lopsided nodes, buffers
// with fewer elements than ranks; the bytes a rank sends; bad node lists refused.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "parallel/comm/inproc_communicator.h"
#include "parallel/replicas/averaging_exchange.h"
#include "runtime/core/error.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using baton::testing::all_close;
using baton::testing::error_message;
using baton::testing::random_tensor;
using baton::testing::to_doubles;

// Runs fn(rank, communicator) on one thread per rank of an in-process group of `n`; a failing rank
// aborts the group (its peers fail at once); throws the failures of every rank, joined.
void on_ranks(int n, const std::function<void(int, comm::Communicator&)>& fn) {
  std::vector<std::unique_ptr<comm::Communicator>> comms = comm::make_inproc_communicators(n);
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(r, *comms[static_cast<size_t>(r)]);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
        comms[static_cast<size_t>(r)]->abort_in_process("rank " + std::to_string(r) + " failed");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::string all;
  for (int r = 0; r < n; ++r) {
    if (!errors[static_cast<size_t>(r)].empty())
      all += "rank " + std::to_string(r) + ": " + errors[static_cast<size_t>(r)] + "\n";
  }
  BATON_CHECK(all.empty(), all);
}

// Every rank's result of exchanging its random buffer of `numel` f64 (seed 100 + rank).
std::vector<std::vector<double>> exchange(int n, int64_t numel, ExchangeKind kind, const std::vector<int>& nodes,
                                          comm::ReduceOp op, std::vector<int64_t>* bytes = nullptr) {
  std::vector<std::vector<double>> out(static_cast<size_t>(n));
  if (bytes) bytes->assign(static_cast<size_t>(n), 0);
  on_ranks(n, [&](int r, comm::Communicator& c) {
    Context ctx(Device::cpu(r));
    AveragingExchange ex(c, kind, nodes);
    Tensor buffer = Tensor::empty(Shape{numel}, DType::f64, ctx);  // on the rank's device
    buffer.copy_from(random_tensor(Shape{numel}, DType::f64, ctx.stream(), 100 + static_cast<uint64_t>(r)),
                     ctx.stream());
    ex.all_reduce(ctx, buffer, op);
    out[static_cast<size_t>(r)] = to_doubles(buffer, ctx.stream());
    if (bytes) (*bytes)[static_cast<size_t>(r)] = ex.bytes_sent();
  });
  return out;
}

std::vector<double> expected_sum(int n, int64_t numel, double scale) {
  const Stream host = Stream::create(Device::cpu());
  std::vector<double> sum(static_cast<size_t>(numel), 0.0);
  for (int r = 0; r < n; ++r) {
    const std::vector<double> v =
        to_doubles(random_tensor(Shape{numel}, DType::f64, host, 100 + static_cast<uint64_t>(r)), host);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += v[i];
  }
  for (double& x : sum) x *= scale;
  return sum;
}

TEST(AveragingExchange, RingAndTreeGiveEveryRankTheSameMeanToRounding) {
  for (int n = 1; n <= 5; ++n) {
    std::vector<int> one(static_cast<size_t>(n), 0), pairs, alternating, lopsided;
    for (int r = 0; r < n; ++r) {
      pairs.push_back(r / 2);
      alternating.push_back(r % 2);
      lopsided.push_back(r == n - 1 ? 1 : 0);
    }
    for (const int64_t numel : {int64_t{3}, int64_t{37}}) {
      const std::vector<double> mean = expected_sum(n, numel, 1.0 / n);
      const std::vector<std::pair<ExchangeKind, std::vector<int>>> cases = {{ExchangeKind::ring, {}},
                                                                            {ExchangeKind::tree, one},
                                                                            {ExchangeKind::tree, pairs},
                                                                            {ExchangeKind::tree, alternating},
                                                                            {ExchangeKind::tree, lopsided}};
      for (size_t c = 0; c < cases.size(); ++c) {
        const auto got = exchange(n, numel, cases[c].first, cases[c].second, comm::ReduceOp::mean);
        for (int r = 0; r < n; ++r) {
          EXPECT_TRUE(all_close(got[static_cast<size_t>(r)], mean, 1e-14, 1e-15))
              << n << " ranks, " << numel << " elements, case " << c << ", rank " << r;
          EXPECT_EQ(got[static_cast<size_t>(r)], got[0]) << "not the same bits on every rank, case " << c;
        }
      }
    }
  }
}

TEST(AveragingExchange, SumsAndCountsTheBytesEachRankSends) {
  std::vector<int64_t> bytes;
  const auto ring = exchange(4, 40, ExchangeKind::ring, {}, comm::ReduceOp::sum, &bytes);
  EXPECT_TRUE(all_close(ring[2], expected_sum(4, 40, 1.0), 1e-14, 1e-15));
  // Reduce-scatter and all-gather: 2 (n - 1) chunks of 10 f64 each.
  for (int64_t b : bytes) EXPECT_EQ(b, 2 * 3 * 10 * 8);
  // Two nodes of two: the second rank of a node sends the buffer to its leader; the leaders run a
  // ring of two (one chunk of 20 each way, twice) and send the result back to the second rank.
  const auto tree = exchange(4, 40, ExchangeKind::tree, {0, 0, 1, 1}, comm::ReduceOp::sum, &bytes);
  EXPECT_TRUE(all_close(tree[3], expected_sum(4, 40, 1.0), 1e-14, 1e-15));
  EXPECT_EQ(bytes, (std::vector<int64_t>{2 * 20 * 8 + 40 * 8, 40 * 8, 2 * 20 * 8 + 40 * 8, 40 * 8}));
}

TEST(AveragingExchange, NodesByHostPutInProcessRanksOnOneNode) {
  on_ranks(3, [](int, comm::Communicator& c) {
    EXPECT_EQ(nodes_by_host(c), (std::vector<int>{0, 0, 0}));
    const AveragingExchange tree(c, ExchangeKind::tree);
    EXPECT_EQ(tree.nodes(), 1);
    EXPECT_EQ(tree.ranks_in_node(), 3);
  });
  on_ranks(4, [](int, comm::Communicator& c) {
    const AveragingExchange tree(c, ExchangeKind::tree, {3, 3, 7, 3});
    EXPECT_EQ(tree.nodes(), 2);
    EXPECT_EQ(tree.ranks_in_node(), c.rank() == 2 ? 1 : 3);
  });
}

TEST(AveragingExchange, BadNodeListsAndDtypesAreRefused) {
  EXPECT_NE(error_message([] {
              on_ranks(2, [](int, comm::Communicator& c) { AveragingExchange(c, ExchangeKind::tree, {0, 0, 1}); });
            }).find("3 node numbers for 2 ranks"),
            std::string::npos);
  EXPECT_NE(error_message([] {
              on_ranks(1, [](int, comm::Communicator& c) {
                Context ctx(Device::cpu());
                AveragingExchange(c, ExchangeKind::ring)
                    .all_reduce(ctx, Tensor::empty(Shape{4}, DType::i64, ctx), comm::ReduceOp::sum);
              });
            }).find("expected f32 or f64"),
            std::string::npos);
}

}  // namespace
}  // namespace baton::parallel
