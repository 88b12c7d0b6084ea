// PendingWork's completion and bounded wait; StreamReady's event.
#include "parallel/comm/pending_work.h"

#include "parallel/comm/spin_wait.h"

namespace baton::comm {

PendingWork::PendingWork(std::string description, std::chrono::milliseconds timeout, TimeoutHandler on_timeout)
    : description_(std::move(description)), timeout_(timeout), on_timeout_(std::move(on_timeout)) {}

void PendingWork::start() {
  std::lock_guard lock(mutex_);
  if (!times_.started) times_.started = std::chrono::steady_clock::now();
}

void PendingWork::complete() {
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
    times_.finished = std::chrono::steady_clock::now();
  }
  done_flag_.store(true, std::memory_order_release);
  finished_.notify_all();
}

void PendingWork::fail(Error error) {
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
    times_.finished = std::chrono::steady_clock::now();
    error_.emplace(std::move(error));
  }
  done_flag_.store(true, std::memory_order_release);
  finished_.notify_all();
}

void PendingWork::wait() {
  spin_until([&] { return done_flag_.load(std::memory_order_acquire); });
  std::unique_lock lock(mutex_);
  if (!finished_.wait_for(lock, timeout_, [&] { return done_; })) {
    lock.unlock();
    on_timeout_(*this);  // throws or ends the process, unless the operation completed meanwhile
    lock.lock();
    BATON_CHECK(done_, description_, " did not complete within ", timeout_.count(), " ms");
  }
  if (error_) throw *error_;
}

bool PendingWork::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

void PendingWork::wait_on(const Stream& /*stream*/) { wait(); }

WorkTimes PendingWork::times() const {
  std::lock_guard lock(mutex_);
  return times_;
}

StreamReady::StreamReady(const Stream& stream) {
  if (stream.device().is_cuda()) {
    event_ = std::make_shared<Event>(stream.device(), false);
    event_->record(stream);
  }
}

void StreamReady::wait() const {
  if (event_) event_->synchronize();
}

}  // namespace baton::comm
