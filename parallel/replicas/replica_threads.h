// ReplicaThreads: runs one task per replica (data-parallel replicas, hybrid groups) on threads kept
// across steps, the replicas sharing the caller's CPU threads, and reports the failure that caused
// the others.
#pragma once

#include <functional>
#include <string>

#include "runtime/core/worker_threads.h"

namespace baton::parallel {

// Which replica's error run() rethrows when several fail.
enum class FailureBlame {
  lowest_index,   // the lowest-indexed failing replica's (every replica runs to its end)
  first_in_time,  // the first to fail: the others fail later, waiting for it in a collective
};

class ReplicaThreads {
 public:
  // `what` names a replica in errors ("data-parallel replica", "hybrid group").
  ReplicaThreads(std::string what, FailureBlame blame) : what_(std::move(what)), blame_(blame) {}

  // Runs fn(i) for i in [0, count), replica 0 on the calling thread and each other on its worker,
  // each with cpu_threads_per_worker(count) CPU threads (runtime/core/cpu_threads.h). When one
  // fails, `on_first_failure(i)` runs once, on the thread of the first failure in time (e.g. to
  // abort in-process communicators, so that the others stop at once). After every task has
  // returned, the blamed failure is rethrown, naming the replica when there are several.
  void run(int count, const std::function<void(int)>& fn, const std::function<void(int)>& on_first_failure = {});

 private:
  std::string what_;
  FailureBlame blame_;
  WorkerThreads workers_;
};

}  // namespace baton::parallel
