// The CPU thread pool: BATON_NUM_THREADS's parsing, per-thread scopes, and parallel_for's ranges,
// which depend on the sizes only.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/core/cpu_threads.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

TEST(CpuThreads, ParsesWholeNumbersAndRefusesTheRestNamingTheVariable) {
  EXPECT_EQ(parse_thread_count("1"), 1);
  EXPECT_EQ(parse_thread_count("16"), 16);
  EXPECT_EQ(parse_thread_count("4096"), 4096);
  for (const char* bad : {"0", "-2", "two", "4x", " 4", "", "4097", "99999999999"}) {
    EXPECT_ERROR_MENTIONS("BATON_NUM_THREADS is '" + std::string(bad) + "', expected a whole number from 1 to 4096",
                          parse_thread_count(bad));
  }
}

TEST(CpuThreads, ScopesNestAndRestorePerThread) {
  const int budget = cpu_thread_budget();
  ASSERT_GE(budget, 1);
  EXPECT_EQ(cpu_threads(), budget);
  {
    const CpuThreadsScope one(1);
    EXPECT_EQ(cpu_threads(), 1);
    {
      const CpuThreadsScope three(3);
      EXPECT_EQ(cpu_threads(), 3);
      int other_thread = 0;
      std::thread([&] { other_thread = cpu_threads(); }).join();
      EXPECT_EQ(other_thread, budget) << "a scope belongs to the thread that made it";
    }
    EXPECT_EQ(cpu_threads(), 1);
  }
  EXPECT_EQ(cpu_threads(), budget);
  const CpuThreadsScope none(0);
  EXPECT_EQ(cpu_threads(), 1) << "at least one thread";
}

TEST(CpuThreads, SplitsTheBudgetBetweenWorkers) {
  EXPECT_EQ(cpu_threads_per_worker(1), cpu_thread_budget());
  EXPECT_EQ(cpu_threads_per_worker(cpu_thread_budget() + 1), 1);
  EXPECT_EQ(cpu_threads_per_worker(0), cpu_thread_budget());
  // Nested splits, as the hybrid's groups and then their pipeline positions take them.
  const CpuThreadsScope eight(8);
  EXPECT_EQ(cpu_threads_per_worker({2, 2}), 2);
  EXPECT_EQ(cpu_threads_per_worker({3, 2}), 1);  // 8 / 3 = 2, then 2 / 2
  EXPECT_EQ(cpu_threads_per_worker({16, 2}), 1);
  EXPECT_EQ(cpu_threads_per_worker({4}), cpu_threads_per_worker(4));
}

// The ranges parallel_for hands out under `threads` threads, sorted.
std::vector<std::pair<int64_t, int64_t>> ranges(int threads, int64_t n, int64_t grain) {
  const CpuThreadsScope scope(threads);
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> seen;
  parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    const std::lock_guard lock(mutex);
    seen.emplace_back(begin, end);
  });
  std::sort(seen.begin(), seen.end());
  return seen;
}

TEST(CpuThreads, ParallelForCoversEveryIndexOnceInRangesThatDependOnTheSizesOnly) {
  for (const auto& [n, grain] : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {1, 4}, {4, 4}, {10, 3}, {1000, 7}}) {
    const auto one = ranges(1, n, grain);
    EXPECT_EQ(ranges(2, n, grain), one) << n << " / " << grain;
    EXPECT_EQ(ranges(7, n, grain), one) << n << " / " << grain;
    int64_t next = 0;
    for (const auto& [begin, end] : one) {
      EXPECT_EQ(begin, next);
      EXPECT_GT(end, begin);
      EXPECT_LE(end - begin, grain);
      next = end;
    }
    EXPECT_EQ(next, n);
  }
}

TEST(CpuThreads, AnExceptionInARangeReachesTheCaller) {
  for (const int threads : {1, 2}) {
    const CpuThreadsScope scope(threads);
    EXPECT_THROW(parallel_for(100, 10,
                              [](int64_t begin, int64_t) {
                                if (begin == 50) throw std::runtime_error("range 5 failed");
                              }),
                 std::runtime_error);
  }
}

}  // namespace
}  // namespace baton
