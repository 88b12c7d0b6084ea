// NcclRank: one rank of an NCCL communicator and what its operations share: the ncclComm_t, the
// communication stream (non-blocking, highest priority) on the rank's device, the operations still
// outstanding, the sends and receives waiting to be issued as one group, and the watchdog thread
// that aborts the communicator when NCCL reports an error or an operation runs past its timeout.
#pragma once

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "parallel/comm/communicator.h"
#include "runtime/core/context.h"
#include "runtime/core/stream.h"

namespace baton::comm {

class NcclRank;

// "<n> ms": a timeout in an error message.
inline std::string milliseconds_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

// One issued or queued operation, as the rank and its Work see it. Guarded by NcclRank's works mutex.
struct NcclOperation {
  std::string description;  // "all_reduce #3 on rank 1 of 4 (nccl)"
  std::chrono::milliseconds timeout{0};
  std::chrono::steady_clock::time_point started, deadline;
  std::shared_ptr<Event> completion;  // recorded after the NCCL call; nullptr until issued
  std::optional<std::chrono::steady_clock::time_point> finished;
};

// The Work of one NCCL operation: complete when its completion event is.
class NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<NcclRank> rank, std::shared_ptr<NcclOperation> operation)
      : rank_(std::move(rank)), operation_(std::move(operation)) {}

  void wait() override;
  bool done() const override;
  void wait_on(const Stream& stream) override;
  WorkTimes times() const override;

 private:
  const std::shared_ptr<NcclRank> rank_;
  const std::shared_ptr<NcclOperation> operation_;
};

class NcclRank : public std::enable_shared_from_this<NcclRank> {
 public:
  // Takes ownership of `comm` (initialised, of `size` ranks, on `device`).
  NcclRank(ncclComm_t comm, Device device, int rank, int size, std::chrono::milliseconds timeout);
  // Stops the watchdog; waits at most the timeout for outstanding operations, then finalises and
  // destroys the communicator, or aborts it when they did not complete.
  ~NcclRank();
  NcclRank(const NcclRank&) = delete;
  NcclRank& operator=(const NcclRank&) = delete;

  Device device() const { return device_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(timeout_ms_.load()); }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ms_ = timeout.count(); }
  const Stream& comm_stream() const { return comm_stream_; }
  Context& comm_context() { return *comm_context_; }

  // Issues one operation: the communication stream waits for the work issued so far on `stream`,
  // then `body(comm, cuda_stream)` issues the NCCL calls (and any kernels) on it, then a completion
  // event is recorded. Tensors in `used` are marked as used by the communication stream. Throws
  // baton::Error when the communicator was aborted or a call fails.
  WorkHandle issue(const std::string& description, const Stream& stream, const std::vector<Tensor>& used,
                   const std::function<void(ncclComm_t, void*)>& body);
  // Queues a send or receive: it is issued with every other queued one in one NCCL group at the
  // next collective, or when the host waits for any operation (so a send never holds up what follows).
  WorkHandle queue_point_to_point(const std::string& description, const Stream& stream, const Tensor& tensor,
                                  const std::function<void(ncclComm_t, void*)>& call);
  // Issues the queued sends and receives (no-op when none are queued).
  void flush_point_to_point();
  // Runs `call(comm)` (a split) with the issue lock held; throws when the communicator was aborted.
  void with_comm(const std::function<void(ncclComm_t)>& call);

  // Aborts the communicator (ncclCommAbort) once; every outstanding and later operation fails with
  // `reason`.
  void abort(const std::string& reason);
  // The reason of the abort, or nothing.
  std::optional<std::string> failure() const;
  // True once `operation` completed (records when); never throws, never blocks.
  bool poll(NcclOperation& operation);
  WorkTimes times_of(const NcclOperation& operation) const;
  // wait() of a Work: polls until `operation` completed; past its deadline aborts the communicator.
  // Throws baton::Error naming the operation and the cause when it failed.
  void wait(const std::shared_ptr<NcclOperation>& operation);
  // The completion event of `operation`, issuing the queued sends and receives first if needed.
  std::shared_ptr<Event> completion_of(const std::shared_ptr<NcclOperation>& operation);

  // Waits until ncclCommGetAsyncError stops answering ncclInProgress (a non-blocking communicator's
  // last call completed); throws on an error or after the timeout, naming `what`.
  static void await_ready(ncclComm_t comm, const std::string& what, std::chrono::milliseconds timeout);

 private:
  struct QueuedMessage {
    std::shared_ptr<NcclOperation> operation;
    std::shared_ptr<Event> ready;  // the caller's stream at the send/recv call (nullptr: a CPU stream)
    Tensor tensor;
    std::function<void(ncclComm_t, void*)> call;
  };
  void watch();
  void check_not_aborted() const;
  std::shared_ptr<Event> record_ready(const Stream& stream);
  void issue_queued();  // with issue_mutex_ held
  std::shared_ptr<NcclOperation> new_operation(const std::string& description);

  ncclComm_t comm_;
  const Device device_;
  const int rank_, size_;
  std::atomic<int64_t> timeout_ms_;
  Stream comm_stream_;
  std::unique_ptr<Context> comm_context_;

  // Held while NCCL calls and kernels are issued (one thread at a time issues).
  std::mutex issue_mutex_;
  std::vector<QueuedMessage> queued_;  // guarded by issue_mutex_

  mutable std::mutex works_mutex_;
  std::vector<std::shared_ptr<NcclOperation>> outstanding_;  // not yet seen complete
  std::optional<std::string> failure_;
  bool comm_released_ = false;  // aborted or destroyed

  std::mutex watchdog_mutex_;
  std::condition_variable watchdog_wakeup_;
  bool stopping_ = false;
  std::thread watchdog_;
};

}  // namespace baton::comm

namespace baton::comm {

// The Communicator of one NcclRank (nccl_communicator.cc); takes ownership of `comm`.
std::unique_ptr<Communicator> make_nccl_rank_communicator(ncclComm_t comm, Device device, int rank, int size,
                                                          std::chrono::milliseconds timeout);

}  // namespace baton::comm
