// Processes of one node whose CPU affinities overlap split their cores (share_cpu_cores, set by the
// MPI runtime): with more processes than cores, each computes with one thread, not every core.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "runtime/core/cpu_threads.h"
#include "tests/parallel/comm/mpi_test_env.h"

namespace baton::comm {
namespace {

TEST(MpiCoreShare, TheProcessesOfANodeSplitTheCoresTheyShare) {
  if (std::getenv("BATON_NUM_THREADS") != nullptr) GTEST_SKIP() << "BATON_NUM_THREADS is set: it fixes the budget";
  Communicator& world = testing::mpi_world();
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  // Each rank's affinity as 0/1 per core, then its budget.
  constexpr int kCores = 256;
  std::vector<int64_t> row(kCores + 1, 0);
  for (int c = 0; c < kCores; ++c) row[static_cast<size_t>(c)] = CPU_ISSET(c, &mine) ? 1 : 0;
  row[kCores] = cpu_thread_budget();
  Stream stream = Stream::create(Device::cpu());
  const Tensor input = Tensor::from_vector(row, Shape{kCores + 1}, stream);
  const Tensor all = Tensor::empty(Shape{world.size() * (kCores + 1)}, DType::i64, stream);
  world.all_gather(input, all, stream)->wait();
  const std::vector<int64_t> rows = all.to_vector<int64_t>(stream);

  int64_t budgets = 0;
  std::vector<char> used(kCores, 0);
  for (int r = 0; r < world.size(); ++r) {
    const int64_t* ranks_row = rows.data() + static_cast<size_t>(r) * (kCores + 1);
    for (int c = 0; c < kCores; ++c) used[static_cast<size_t>(c)] |= ranks_row[c] != 0 ? 1 : 0;
    budgets += ranks_row[kCores];
    EXPECT_GE(ranks_row[kCores], 1) << "rank " << r;
  }
  const int64_t cores = std::count(used.begin(), used.end(), 1);
  EXPECT_LE(cpu_thread_budget(), CPU_COUNT(&mine));
  // The test's processes run on one machine: together no more threads than its cores, or 1 each.
  EXPECT_LE(budgets, std::max<int64_t>(cores, world.size())) << world.size() << " processes on " << cores << " cores";
}

}  // namespace
}  // namespace baton::comm
