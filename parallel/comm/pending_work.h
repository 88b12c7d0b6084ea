// PendingWork: the Work of one queued host-side operation, completed or failed by the thread that
// runs it; StreamReady: the point on the producer's stream after which that thread may touch the
// tensors.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "parallel/comm/communicator.h"
#include "runtime/core/error.h"
#include "runtime/core/stream.h"

namespace baton::comm {

class PendingWork final : public Work {
 public:
  // Called by wait() when the operation has not completed within `timeout`: it throws the
  // backend's error (inproc) or ends the process (mpi); it returns only when the operation
  // completed meanwhile (done() is true).
  using TimeoutHandler = std::function<void(const PendingWork&)>;

  // `description` names the operation in messages: "all_reduce #3 on rank 1 of 4 (inproc)".
  PendingWork(std::string description, std::chrono::milliseconds timeout, TimeoutHandler on_timeout);

  // The operation's thread takes it up (the first call counts).
  void start();
  void complete();
  // wait() will throw `error`.
  void fail(Error error);

  void wait() override;
  bool done() const override;
  // Host backends: a stream of any device can only be ordered after the host, so this waits.
  void wait_on(const Stream& stream) override;
  WorkTimes times() const override;

  const std::string& description() const { return description_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  const std::string description_;
  const std::chrono::milliseconds timeout_;
  const TimeoutHandler on_timeout_;
  mutable std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::atomic<bool> done_flag_{false};  // done_, for wait()'s spin without the mutex
  std::optional<Error> error_;
  WorkTimes times_;
};

// The work issued so far on a stream: nothing to wait for on a CPU stream (its work ran at issue);
// on a CUDA stream an event recorded at construction, waited for by wait().
class StreamReady {
 public:
  StreamReady() = default;  // nothing to wait for
  explicit StreamReady(const Stream& stream);
  void wait() const;

 private:
  std::shared_ptr<Event> event_;
};

}  // namespace baton::comm
