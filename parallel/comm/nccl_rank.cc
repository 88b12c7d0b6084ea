// NcclRank: issuing NCCL operations on the communication stream (sends and receives queued into
// one group), aborting, and the end of the communicator (nccl_watchdog.cc watches the operations).
#include "parallel/comm/nccl_rank.h"

#include <algorithm>

#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/nccl_check.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"

namespace baton::comm {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

NcclRank::NcclRank(ncclComm_t comm, Device device, int rank, int size, std::chrono::milliseconds timeout)
    : comm_(comm),
      device_(device),
      rank_(rank),
      size_(size),
      timeout_ms_(timeout.count()),
      comm_stream_(Stream::create(device, StreamPriority::high)),
      comm_context_(std::make_unique<Context>(comm_stream_)) {
  watchdog_ = std::thread([this] { watch(); });
}

NcclRank::~NcclRank() {
  {
    std::lock_guard<std::mutex> lock(watchdog_mutex_);
    stopping_ = true;
  }
  watchdog_wakeup_.notify_all();
  watchdog_.join();
  try {
    flush_point_to_point();
  } catch (const std::exception& e) {
    log_warn(detail::concat("nccl rank ", rank_, " of ", size_, ": ", e.what()));
  }
  // Outstanding operations get at most the timeout to complete; then the communicator is aborted.
  const auto deadline = Clock::now() + timeout();
  bool pending = true;
  while (pending && !failure() && Clock::now() < deadline) {
    const std::vector<std::shared_ptr<NcclOperation>> operations = [this] {
      std::lock_guard<std::mutex> lock(works_mutex_);
      return outstanding_;
    }();
    pending = std::any_of(operations.begin(), operations.end(), [this](const auto& op) { return !poll(*op); });
    if (pending) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (pending && !failure()) {
    abort(detail::concat("the communicator was destroyed with operations that did not complete within ",
                         milliseconds_text(timeout())));
  }
  std::lock_guard<std::mutex> lock(works_mutex_);
  if (comm_released_) return;
  comm_released_ = true;
  const CudaDeviceGuard guard(device_.index(), std::nothrow);
  ncclResult_t result = ncclCommFinalize(comm_);
  while (result == ncclSuccess || result == ncclInProgress) {
    ncclResult_t state = ncclSuccess;
    result = ncclCommGetAsyncError(comm_, &state);
    if (result != ncclSuccess || state != ncclInProgress) {
      result = state;
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (result != ncclSuccess) {
    log_warn(detail::concat("nccl rank ", rank_, " of ", size_, ": ncclCommFinalize failed (",
                            ncclGetErrorString(result), "); aborting the communicator"));
    ncclCommAbort(comm_);
    return;
  }
  if (const ncclResult_t destroyed = ncclCommDestroy(comm_); destroyed != ncclSuccess) {
    log_warn(detail::concat("nccl rank ", rank_, " of ", size_,
                            ": ncclCommDestroy failed: ", ncclGetErrorString(destroyed)));
  }
}

std::shared_ptr<NcclOperation> NcclRank::new_operation(const std::string& description) {
  auto operation = std::make_shared<NcclOperation>();
  operation->description = description;
  operation->timeout = timeout();
  operation->started = Clock::now();
  operation->deadline = operation->started + operation->timeout;
  return operation;
}

void NcclRank::check_not_aborted() const {
  if (const auto reason = failure()) {
    throw Error(detail::concat("nccl rank ", rank_, " of ", size_, ": the communicator was aborted: ", *reason));
  }
}

std::shared_ptr<Event> NcclRank::record_ready(const Stream& stream) {
  if (!stream.device().is_cuda()) return nullptr;  // a CPU stream's work is done at issue
  auto ready = std::make_shared<Event>(stream.device(), false);
  ready->record(stream);
  return ready;
}

WorkHandle NcclRank::issue(const std::string& description, const Stream& stream, const std::vector<Tensor>& used,
                           const std::function<void(ncclComm_t, void*)>& body) {
  std::lock_guard<std::mutex> issuing(issue_mutex_);
  check_not_aborted();
  issue_queued();
  const CudaDeviceGuard guard(device_.index());
  if (auto ready = record_ready(stream)) comm_stream_.wait(*ready);
  for (const Tensor& tensor : used) tensor.record_stream(comm_stream_);
  std::shared_ptr<NcclOperation> operation = new_operation(description);
  try {
    body(comm_, comm_stream_.native_handle());
  } catch (const Error&) {
    // The watchdog may abort the communicator while this thread is inside an NCCL call.
    if (const auto reason = failure())
      throw Error(detail::concat(description, ": the communicator was aborted: ", *reason));
    throw;
  }
  auto completion = std::make_shared<Event>(device_, false);
  completion->record(comm_stream_);
  std::lock_guard<std::mutex> lock(works_mutex_);
  operation->completion = std::move(completion);
  outstanding_.push_back(operation);
  return std::make_shared<NcclWork>(shared_from_this(), operation);
}

WorkHandle NcclRank::queue_point_to_point(const std::string& description, const Stream& stream, const Tensor& tensor,
                                          const std::function<void(ncclComm_t, void*)>& call) {
  std::lock_guard<std::mutex> issuing(issue_mutex_);
  check_not_aborted();
  std::shared_ptr<NcclOperation> operation = new_operation(description);
  queued_.push_back({operation, record_ready(stream), tensor, call});
  std::lock_guard<std::mutex> lock(works_mutex_);
  outstanding_.push_back(operation);
  return std::make_shared<NcclWork>(shared_from_this(), operation);
}

void NcclRank::flush_point_to_point() {
  std::lock_guard<std::mutex> issuing(issue_mutex_);
  if (!queued_.empty()) check_not_aborted();
  issue_queued();
}

void NcclRank::issue_queued() {
  if (queued_.empty()) return;
  std::vector<QueuedMessage> messages = std::move(queued_);
  queued_.clear();
  const CudaDeviceGuard guard(device_.index());
  for (const QueuedMessage& m : messages) {
    if (m.ready) comm_stream_.wait(*m.ready);
    m.tensor.record_stream(comm_stream_);
  }
  BATON_NCCL_CHECK(ncclGroupStart());
  for (const QueuedMessage& m : messages) m.call(comm_, comm_stream_.native_handle());
  const ncclResult_t ended = ncclGroupEnd();
  if (ended == ncclInProgress) {
    await_ready(comm_, "a group of sends and receives", timeout());
  } else {
    BATON_NCCL_CHECK(ended);
  }
  auto completion = std::make_shared<Event>(device_, false);
  completion->record(comm_stream_);
  std::lock_guard<std::mutex> lock(works_mutex_);
  for (const QueuedMessage& m : messages) m.operation->completion = completion;
}

void NcclRank::with_comm(const std::function<void(ncclComm_t)>& call) {
  std::lock_guard<std::mutex> issuing(issue_mutex_);
  check_not_aborted();
  issue_queued();
  const CudaDeviceGuard guard(device_.index());
  call(comm_);
}

std::optional<std::string> NcclRank::failure() const {
  std::lock_guard<std::mutex> lock(works_mutex_);
  return failure_;
}

void NcclRank::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(works_mutex_);
    if (failure_ || comm_released_) return;
    failure_ = reason;
  }
  // A thread may be inside an NCCL call that waits for a peer: give it a moment to return, then
  // abort anyway (ncclCommAbort is how NCCL unblocks it).
  std::unique_lock<std::mutex> issuing(issue_mutex_, std::defer_lock);
  for (int i = 0; i < 100 && !issuing.try_lock(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  log_warn(detail::concat("nccl rank ", rank_, " of ", size_, ": aborting the communicator: ", reason));
  std::lock_guard<std::mutex> lock(works_mutex_);
  comm_released_ = true;
  const CudaDeviceGuard guard(device_.index(), std::nothrow);
  if (const ncclResult_t result = ncclCommAbort(comm_); result != ncclSuccess) {
    log_warn(detail::concat("nccl rank ", rank_, ": ncclCommAbort failed: ", ncclGetErrorString(result)));
  }
}

std::shared_ptr<Event> NcclRank::completion_of(const std::shared_ptr<NcclOperation>& operation) {
  {
    std::lock_guard<std::mutex> lock(works_mutex_);
    if (operation->completion) return operation->completion;
  }
  flush_point_to_point();
  std::lock_guard<std::mutex> lock(works_mutex_);
  return operation->completion;
}

void NcclRank::await_ready(ncclComm_t comm, const std::string& what, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    ncclResult_t state = ncclSuccess;
    BATON_NCCL_CHECK(ncclCommGetAsyncError(comm, &state));
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) {
      throw Error(detail::concat(what, ": NCCL reported ", ncclGetErrorString(state)));
    }
    if (Clock::now() > deadline) {
      throw Error(detail::concat(what, " did not complete within ", milliseconds_text(timeout),
                                 " (a peer failed or did not take part)"));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace baton::comm
