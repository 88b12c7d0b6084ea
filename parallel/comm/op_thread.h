// OpThread: the communication thread of a communicator (inproc) or of a process (mpi): runs posted
// tasks one at a time in the order they were posted, while the posting thread goes on computing.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace baton::comm {

class OpThread {
 public:
  // `poll`, when given, is called after every task and, while it returns true (requests still in
  // flight), every `poll_interval` when the queue is empty (the MPI backend completes its sends so).
  explicit OpThread(std::function<bool()> poll = {},
                    std::chrono::microseconds poll_interval = std::chrono::microseconds(200));
  // Runs the tasks already posted, then joins.
  ~OpThread();
  OpThread(const OpThread&) = delete;
  OpThread& operator=(const OpThread&) = delete;

  // Tasks report their own failures (through their Work); an exception escaping one is logged.
  void post(std::function<void()> task);
  bool on_this_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  void run();

  const std::function<bool()> poll_;
  const std::chrono::microseconds poll_interval_;
  std::mutex mutex_;
  std::condition_variable posted_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::atomic<size_t> queued_{0};  // tasks_.size(), for the spin before the thread sleeps
  std::thread thread_;             // last: starts once the members above exist
};

}  // namespace baton::comm
