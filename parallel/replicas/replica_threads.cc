// ReplicaThreads: one task per replica on kept threads, and the blamed failure rethrown.
#include "parallel/replicas/replica_threads.h"

#include <exception>
#include <mutex>
#include <vector>

#include "runtime/core/cpu_threads.h"
#include "runtime/core/error.h"

namespace baton::parallel {

void ReplicaThreads::run(int count, const std::function<void(int)>& fn,
                         const std::function<void(int)>& on_first_failure) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(count));
  std::mutex mutex;
  int first = -1;  // the first failure in time
  const auto guarded = [&](int i) {
    try {
      fn(i);
    } catch (...) {
      errors[static_cast<size_t>(i)] = std::current_exception();
      {
        std::lock_guard lock(mutex);
        if (first >= 0) return;
        first = i;
      }
      if (on_first_failure) on_first_failure(i);
    }
  };
  const int cpu_threads = cpu_threads_per_worker(count);  // the replicas share this thread's CPU threads
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < count; ++i) {
    tasks.emplace_back([&guarded, i, cpu_threads] {
      const CpuThreadsScope scope(cpu_threads);
      guarded(i);
    });
  }
  workers_.run(tasks);
  if (first < 0) return;
  int blamed = first;
  if (blame_ == FailureBlame::lowest_index) {
    blamed = 0;
    while (!errors[static_cast<size_t>(blamed)]) ++blamed;
  }
  try {
    std::rethrow_exception(errors[static_cast<size_t>(blamed)]);
  } catch (Error& e) {
    if (count > 1) e.add_context("in " + what_ + " " + std::to_string(blamed));
    throw;
  }
}

}  // namespace baton::parallel
