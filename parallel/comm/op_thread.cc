// OpThread's in-order task loop with optional polling of requests in flight.
#include "parallel/comm/op_thread.h"

#include <exception>

#include "parallel/comm/spin_wait.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"

namespace baton::comm {

OpThread::OpThread(std::function<bool()> poll, std::chrono::microseconds poll_interval)
    : poll_(std::move(poll)), poll_interval_(poll_interval), thread_([this] { run(); }) {}

OpThread::~OpThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  posted_.notify_all();
  thread_.join();
}

void OpThread::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    BATON_CHECK(!stopping_, "communication thread: an operation was posted while it shuts down");
    tasks_.push_back(std::move(task));
    queued_.fetch_add(1, std::memory_order_release);
  }
  posted_.notify_one();
}

void OpThread::run() {
  bool polling = false;
  for (;;) {
    std::function<void()> task;
    // An operation posted right after the last one is taken up without a sleep and wake-up.
    if (!polling) spin_until([&] { return queued_.load(std::memory_order_acquire) > 0; });
    {
      std::unique_lock lock(mutex_);
      const auto ready = [&] { return !tasks_.empty() || stopping_; };
      if (polling) {
        posted_.wait_for(lock, poll_interval_, ready);
      } else {
        posted_.wait(lock, ready);
      }
      if (!tasks_.empty()) {
        task = std::move(tasks_.front());
        tasks_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      } else if (stopping_) {
        return;
      }
    }
    try {
      if (task) task();
      if (poll_) polling = poll_();
    } catch (const std::exception& e) {
      log_error("communication thread: ", e.what());
    }
  }
}

}  // namespace baton::comm
