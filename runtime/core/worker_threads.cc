// WorkerThreads: one condition variable per worker hands it a task and reports it done.
#include "runtime/core/worker_threads.h"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace baton {

struct WorkerThreads::Worker {
  std::mutex mutex;
  std::condition_variable changed;
  const std::function<void()>* task = nullptr;  // set by run(), cleared by the worker when done
  bool stop = false;
  std::exception_ptr error;
  std::thread thread;  // last: starts once the members above exist

  Worker() : thread([this] { loop(); }) {}

  void loop() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [this] { return stop || task != nullptr; });
      if (stop) return;
      const std::function<void()>* current = task;
      lock.unlock();
      std::exception_ptr failure;
      try {
        (*current)();
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      error = failure;
      task = nullptr;
      changed.notify_all();
    }
  }
};

WorkerThreads::WorkerThreads() = default;

WorkerThreads::~WorkerThreads() {
  for (auto& worker : workers_) {
    {
      std::lock_guard lock(worker->mutex);
      worker->stop = true;
    }
    worker->changed.notify_all();
    worker->thread.join();
  }
}

void WorkerThreads::run(std::span<const std::function<void()>> tasks) {
  if (tasks.empty()) return;
  while (workers_.size() + 1 < tasks.size()) workers_.push_back(std::make_unique<Worker>());
  for (size_t i = 1; i < tasks.size(); ++i) {
    Worker& worker = *workers_[i - 1];
    {
      std::lock_guard lock(worker.mutex);
      worker.task = &tasks[i];
      worker.error = nullptr;
    }
    worker.changed.notify_all();
  }
  std::exception_ptr first;
  try {
    tasks[0]();
  } catch (...) {
    first = std::current_exception();
  }
  for (size_t i = 1; i < tasks.size(); ++i) {
    Worker& worker = *workers_[i - 1];
    std::unique_lock lock(worker.mutex);
    worker.changed.wait(lock, [&] { return worker.task == nullptr; });
    if (!first && worker.error) first = worker.error;
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace baton
