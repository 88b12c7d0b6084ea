// WorkerThreads: threads that live as long as their owner and run one task each per call, for the
// per-step workers of pipelines, hybrid groups and data-parallel replicas.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace baton {

// run(tasks) runs tasks[0] on the calling thread and tasks[i] on worker i, started on first use and
// kept: a thread keeps its OpenMP team and oneDNN's per-thread state from one call to the next
// (starting fresh threads every step cost about 20 ms per ResNet-20 step on 2 cores, each new thread
// building its OpenMP team again). run() returns when every task has returned and rethrows the
// first exception of the lowest task index. One run() at a time per object; tasks may call run()
// of other WorkerThreads objects (nesting).
class WorkerThreads {
 public:
  WorkerThreads();
  ~WorkerThreads();  // stops and joins the workers
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  void run(std::span<const std::function<void()>> tasks);
  int started() const { return static_cast<int>(workers_.size()); }

 private:
  struct Worker;
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace baton
