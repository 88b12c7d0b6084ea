// NcclRank's watch over its operations: polling completion events, the host waits of Work::wait
// with the timeout, and the watchdog thread that aborts the communicator on an NCCL error or an
// operation past its deadline (so that no rank hangs); the Work of an NCCL operation.
#include <algorithm>

#include "parallel/comm/nccl_rank.h"
#include "runtime/core/error.h"

namespace baton::comm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kWatchdogPeriod = std::chrono::milliseconds(5);

}  // namespace

bool NcclRank::poll(NcclOperation& operation) {
  std::shared_ptr<Event> completion;
  {
    std::lock_guard<std::mutex> lock(works_mutex_);
    if (operation.finished) return true;
    completion = operation.completion;
  }
  if (completion == nullptr || !completion->query()) return false;
  std::lock_guard<std::mutex> lock(works_mutex_);
  if (!operation.finished) operation.finished = Clock::now();
  return true;
}

WorkTimes NcclRank::times_of(const NcclOperation& operation) const {
  std::lock_guard<std::mutex> lock(works_mutex_);
  return {operation.started, operation.finished};
}

void NcclRank::wait(const std::shared_ptr<NcclOperation>& operation) {
  if (!failure()) completion_of(operation);
  auto pause = std::chrono::microseconds(20);
  while (true) {
    if (const auto reason = failure()) {
      throw Error(detail::concat(operation->description, ": the communicator was aborted: ", *reason));
    }
    if (poll(*operation)) return;
    if (Clock::now() > operation->deadline) {
      const std::string reason =
          detail::concat(operation->description, " did not complete within ", milliseconds_text(operation->timeout),
                         " (a peer failed or did not issue it)");
      abort(reason);
      throw Error(reason + "; the communicator was aborted");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(1));
  }
}

void NcclRank::watch() {
  std::unique_lock<std::mutex> lock(watchdog_mutex_);
  while (!watchdog_wakeup_.wait_for(lock, kWatchdogPeriod, [this] { return stopping_; })) {
    if (failure()) continue;
    std::vector<std::shared_ptr<NcclOperation>> operations;
    {
      std::lock_guard<std::mutex> works(works_mutex_);
      if (comm_released_) continue;
      operations = outstanding_;
    }
    std::vector<const NcclOperation*> done;
    std::optional<std::string> reason;
    for (const auto& operation : operations) {
      if (poll(*operation)) {
        done.push_back(operation.get());
      } else if (!reason && Clock::now() > operation->deadline) {
        reason =
            detail::concat(operation->description, " did not complete within ", milliseconds_text(operation->timeout),
                           " (a peer failed or did not issue it; found by the watchdog)");
      }
    }
    {
      std::lock_guard<std::mutex> works(works_mutex_);
      std::erase_if(outstanding_,
                    [&](const auto& op) { return std::find(done.begin(), done.end(), op.get()) != done.end(); });
      if (!reason && !comm_released_) {
        ncclResult_t state = ncclSuccess;
        const ncclResult_t result = ncclCommGetAsyncError(comm_, &state);
        if (result != ncclSuccess) state = result;
        if (state != ncclSuccess && state != ncclInProgress) {
          reason =
              detail::concat("NCCL reported an error on rank ", rank_, " of ", size_, ": ", ncclGetErrorString(state));
        }
      }
    }
    if (reason) abort(*reason);
  }
}

void NcclWork::wait() { rank_->wait(operation_); }

bool NcclWork::done() const {
  try {
    rank_->completion_of(operation_);  // a queued send or receive is issued now
  } catch (const std::exception&) {
    // done() never throws: the failure shows in wait(), or the watchdog ends the operation.
  }
  return rank_->failure().has_value() || rank_->poll(*operation_);
}

void NcclWork::wait_on(const Stream& stream) {
  std::shared_ptr<Event> completion = rank_->completion_of(operation_);
  if (completion == nullptr) {
    wait();  // aborted before it was issued: throws the reason
    return;
  }
  if (stream.device().is_cuda()) {
    stream.wait(*completion);
  } else {
    wait();
  }
}

WorkTimes NcclWork::times() const {
  rank_->poll(*operation_);
  return rank_->times_of(*operation_);
}

}  // namespace baton::comm
