// WorkerThreads: each task once, task 0 on the caller, the same threads from call to call, errors
// rethrown after every task has returned, nesting.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/worker_threads.h"

namespace baton {
namespace {

// Runs `count` tasks that record their thread; returns the ids by task index.
std::vector<std::thread::id> thread_of_each_task(WorkerThreads& workers, int count) {
  std::vector<std::thread::id> ids(static_cast<size_t>(count));
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < count; ++i)
    tasks.emplace_back([&ids, i] { ids[static_cast<size_t>(i)] = std::this_thread::get_id(); });
  workers.run(tasks);
  return ids;
}

TEST(WorkerThreads, RunsEachTaskOnItsOwnThreadTheCallersFirstAndKeepsThem) {
  WorkerThreads workers;
  const std::vector<std::thread::id> first = thread_of_each_task(workers, 4);
  EXPECT_EQ(first[0], std::this_thread::get_id());
  EXPECT_EQ(std::set<std::thread::id>(first.begin(), first.end()).size(), 4u);
  EXPECT_EQ(workers.started(), 3);
  for (int call = 0; call < 20; ++call) EXPECT_EQ(thread_of_each_task(workers, 4), first) << "call " << call;
  // Fewer tasks use the first workers; more start new ones.
  const std::vector<std::thread::id> two = thread_of_each_task(workers, 2);
  EXPECT_EQ(two, std::vector<std::thread::id>(first.begin(), first.begin() + 2));
  const std::vector<std::thread::id> six = thread_of_each_task(workers, 6);
  EXPECT_EQ(std::vector<std::thread::id>(six.begin(), six.begin() + 4), first);
  EXPECT_EQ(workers.started(), 5);
}

TEST(WorkerThreads, ReturnsOnlyWhenEveryTaskHasReturnedAndRethrowsTheLowestIndexsError) {
  WorkerThreads workers;
  std::atomic<int> finished{0};
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < 4; ++i) {
    tasks.emplace_back([&finished, i] {
      if (i == 3) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++finished;
      if (i == 1 || i == 3) throw std::runtime_error("task " + std::to_string(i));
    });
  }
  try {
    workers.run(tasks);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task 1");
  }
  EXPECT_EQ(finished.load(), 4);
  // The workers survive a failed call.
  finished = 0;
  std::vector<std::function<void()>> fine(4, [&finished] { ++finished; });
  workers.run(fine);
  EXPECT_EQ(finished.load(), 4);
}

TEST(WorkerThreads, TasksMayRunOtherWorkerThreads) {
  WorkerThreads outer;
  std::vector<WorkerThreads> inner(3);
  std::atomic<int> leaves{0};
  std::vector<std::function<void()>> tasks;
  for (int g = 0; g < 3; ++g) {
    tasks.emplace_back([&, g] {
      std::vector<std::function<void()>> positions(4, [&leaves] { ++leaves; });
      for (int step = 0; step < 5; ++step) inner[static_cast<size_t>(g)].run(positions);
    });
  }
  outer.run(tasks);
  EXPECT_EQ(leaves.load(), 3 * 4 * 5);
  outer.run({});  // no tasks: returns at once
}

}  // namespace
}  // namespace baton
