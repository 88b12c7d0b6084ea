// MpiEngine: the process's MPI communication thread (it initialises MPI, makes every MPI call of the
// operations in issue order, and finalises MPI), its watchdog, and the abort that ends the whole job.
// Internal to the mpi backend; this header names no MPI type, so it compiles without MPI.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "parallel/comm/communicator.h"
#include "parallel/comm/mpi_runtime.h"
#include "parallel/comm/op_thread.h"

namespace baton::comm {

class MpiEngine {
 public:
  // Starts the communication thread, which calls MPI_Init_thread asking for MPI_THREAD_MULTIPLE
  // (needed only so that a timed-out wait() on another thread may call MPI_Abort: every other MPI
  // call is made by the communication thread). Throws baton::Error when MPI fails to initialise or
  // was initialised before in this process.
  MpiEngine();
  // Completes the sends in flight (within the default timeout), calls MPI_Finalize and joins.
  ~MpiEngine();
  MpiEngine(const MpiEngine&) = delete;
  MpiEngine& operator=(const MpiEngine&) = delete;

  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  int tag_limit() const { return tag_limit_; }  // MPI_TAG_UB
  std::string_view thread_level() const;

  // Runs `task` on the communication thread after the tasks posted before it.
  void post(std::function<void()> task);
  // The same for a task that only starts a send (MPI_Isend), which returns at once.
  void post_send(std::function<void()> task) { thread_->post(std::move(task)); }
  // Whether every task queued or running is a send: a task posted now is taken up within
  // microseconds once the communication thread has the core.
  bool only_sends_ahead() const { return tasks_that_may_block_.load(std::memory_order_acquire) == 0; }
  // The same, waiting for it; an exception it throws is rethrown here.
  void run(const std::function<void()>& task);
  // Called on the communication thread around a blocking MPI call: past `timeout` the watchdog
  // ends the job, naming `what` and the peers that may have failed.
  void watch(std::string what, std::chrono::milliseconds timeout, std::string peers);
  void unwatch();
  // A request in flight (a send): `test` is called by the communication thread between operations
  // and while idle until it returns true.
  void add_in_flight(std::function<bool()> test) { in_flight_.push_back(std::move(test)); }

  // Prints "baton mpi: rank R of N: <message>; ending the job (MPI_Abort)" as one line on stderr
  // and ends every process of the job with MPI_Abort(MPI_COMM_WORLD, 1).
  [[noreturn]] void abort(const std::string& message) const;

 private:
  void initialise();
  void finalise();
  bool poll_in_flight();
  void watchdog_loop();

  int world_rank_ = 0;
  int world_size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  int tag_limit_ = 32767;
  int provided_ = 0;
  std::thread::id comm_thread_;
  std::vector<std::function<bool()>> in_flight_;  // communication thread only
  std::atomic<int> tasks_that_may_block_{0};      // posted with post() and not finished

  struct Watched {
    std::string what;
    std::string peers;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::milliseconds timeout{0};
  };
  std::mutex watch_mutex_;
  std::condition_variable watch_changed_;
  std::optional<Watched> watched_;
  bool stop_watchdog_ = false;

  std::thread watchdog_;
  std::unique_ptr<OpThread> thread_;  // reset first in the destructor, while the watchdog still runs
};

// MPI's return code `code` of `call` as a baton::Error ("MPI_Allreduce: MPI_ERR_TRUNCATE: message
// truncated"), thrown unless it is MPI_SUCCESS.
void check_mpi(int code, std::string_view call);

// A communicator over a duplicate of MPI_COMM_WORLD (mpi_communicator.cc).
std::unique_ptr<Communicator> make_mpi_world_communicator(const std::shared_ptr<MpiEngine>& engine,
                                                          MpiReduction reduction);

}  // namespace baton::comm
