// MpiEngine: MPI initialisation and finalisation on the communication thread, the watchdog of blocking
// calls, sends in flight, and the abort that ends the job.
#include "parallel/comm/mpi_engine.h"

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <vector>

#include "parallel/comm/collective_args.h"
#include "runtime/core/cpu_threads.h"
#include "runtime/core/error.h"
#include "runtime/core/message_text.h"

namespace baton::comm {
namespace {

// MPI may be initialised once per process: 0 before, 1 while an MpiEngine lives, 2 after.
std::atomic<int> g_mpi_state{0};

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error code " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

// This process's share of the cores it may run on, against the other processes of its node
// (`local`): each core counts 1 / n for the n processes that may run on it (Open MPI binds no
// process when there are more than cores), into `share`; left alone when the affinity cannot be read.
// Every process of `local` must call it (a collective); returns the MPI status.
int local_core_share(MPI_Comm local, int local_size, int& share) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  const bool known = sched_getaffinity(0, sizeof(mine), &mine) == 0;
  if (!known) CPU_ZERO(&mine);  // counts on no core
  std::vector<cpu_set_t> all(static_cast<size_t>(local_size));
  const int code = MPI_Allgather(&mine, sizeof(cpu_set_t), MPI_BYTE, all.data(), sizeof(cpu_set_t), MPI_BYTE, local);
  if (code != MPI_SUCCESS || !known) return code;
  double cores = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &mine)) continue;
    int sharing = 0;
    for (const cpu_set_t& other : all) sharing += CPU_ISSET(c, &other) ? 1 : 0;
    cores += 1.0 / std::max(1, sharing);
  }
  share = std::max(1, static_cast<int>(cores + 1e-9));
  return MPI_SUCCESS;
}

}  // namespace

void check_mpi(int code, std::string_view call) {
  if (code != MPI_SUCCESS) BATON_FAIL(call, ": ", error_string(code));
}

MpiEngine::MpiEngine() {
  int state = 0;
  BATON_CHECK(g_mpi_state.compare_exchange_strong(state, 1),
              state == 1 ? "MPI is already initialised by another baton::comm::MpiRuntime of this process (make one, "
                           "in main, and keep it for the whole run)"
                         : "MPI was finalised in this process and cannot be initialised again (MPI allows one "
                           "initialisation per process: keep one MpiRuntime for the whole run)");
  thread_ = std::make_unique<OpThread>([this] { return poll_in_flight(); });
  try {
    run([this] { initialise(); });
  } catch (...) {
    thread_.reset();
    g_mpi_state = 2;
    throw;
  }
  watchdog_ = std::thread([this] { watchdog_loop(); });
}

MpiEngine::~MpiEngine() {
  post([this] { finalise(); });
  thread_.reset();  // runs the finalisation, then joins
  {
    std::lock_guard lock(watch_mutex_);
    stop_watchdog_ = true;
  }
  watch_changed_.notify_all();
  watchdog_.join();
}

void MpiEngine::initialise() {
  comm_thread_ = std::this_thread::get_id();
  int initialised = 0;
  check_mpi(MPI_Initialized(&initialised), "MPI_Initialized");
  BATON_CHECK(!initialised,
              "MPI was initialised outside baton in this process: let baton::comm::MpiRuntime initialise it (its "
              "communication thread makes every MPI call)");
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided_), "MPI_Init_thread");
  if (provided_ < MPI_THREAD_FUNNELED) {
    MPI_Finalize();  // its status cannot add to the error below
    BATON_FAIL("MPI_Init_thread provided ", thread_level(),
               ": baton needs at least MPI_THREAD_FUNNELED (one communication thread beside the program's threads)");
  }
  check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &world_size_), "MPI_Comm_size");
  // The processes of this node: MPI_COMM_TYPE_SHARED groups those that can share memory.
  MPI_Comm local = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank_, MPI_INFO_NULL, &local),
            "MPI_Comm_split_type");
  const int rank_code = MPI_Comm_rank(local, &local_rank_);
  const int size_code = MPI_Comm_size(local, &local_size_);
  int share = 0;
  const int share_code = size_code == MPI_SUCCESS ? local_core_share(local, local_size_, share) : MPI_SUCCESS;
  check_mpi(MPI_Comm_free(&local), "MPI_Comm_free");
  check_mpi(rank_code, "MPI_Comm_rank");
  check_mpi(size_code, "MPI_Comm_size");
  check_mpi(share_code, "MPI_Allgather (the node's CPU affinities)");
  if (share > 0) share_cpu_cores(share);
  void* tag_ub = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found), "MPI_Comm_get_attr(MPI_TAG_UB)");
  if (found) tag_limit_ = *static_cast<int*>(tag_ub);
}

void MpiEngine::finalise() {
  std::chrono::milliseconds limit = std::chrono::seconds(60);
  try {
    limit = default_timeout();
  } catch (const Error&) {  // a malformed BATON_COMM_TIMEOUT was reported where communicators were made
  }
  watch("MPI_Finalize (after completing the sends in flight)", limit, "any rank");
  while (poll_in_flight()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  const int code = MPI_Finalize();
  unwatch();
  g_mpi_state = 2;
  check_mpi(code, "MPI_Finalize");
}

std::string_view MpiEngine::thread_level() const {
  switch (provided_) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "an unknown MPI thread level";
  }
}

void MpiEngine::run(const std::function<void()>& task) {
  BATON_CHECK(!thread_->on_this_thread(), "MpiEngine::run on the communication thread would wait for itself");
  std::promise<void> finished;
  std::future<void> result = finished.get_future();
  post([&] {
    try {
      task();
      finished.set_value();
    } catch (...) {
      finished.set_exception(std::current_exception());
    }
  });
  result.get();
}

void MpiEngine::post(std::function<void()> task) {
  tasks_that_may_block_.fetch_add(1, std::memory_order_acq_rel);
  thread_->post([this, task = std::move(task)] {
    struct Finished {
      std::atomic<int>& count;
      ~Finished() { count.fetch_sub(1, std::memory_order_acq_rel); }
    } finished{tasks_that_may_block_};
    task();
  });
}

bool MpiEngine::poll_in_flight() {
  std::erase_if(in_flight_, [](const std::function<bool()>& test) { return test(); });
  return !in_flight_.empty();
}

// The watchdog is not woken: it looks every 50 ms, and a wake-up per operation would cost a context
// switch on every collective.
void MpiEngine::watch(std::string what, std::chrono::milliseconds timeout, std::string peers) {
  std::lock_guard lock(watch_mutex_);
  watched_ = Watched{std::move(what), std::move(peers), std::chrono::steady_clock::now() + timeout, timeout};
}

void MpiEngine::unwatch() {
  std::lock_guard lock(watch_mutex_);
  watched_.reset();
}

void MpiEngine::watchdog_loop() {
  std::unique_lock lock(watch_mutex_);
  while (!stop_watchdog_) {
    watch_changed_.wait_for(lock, std::chrono::milliseconds(50));
    if (watched_ && std::chrono::steady_clock::now() > watched_->deadline) {
      const Watched late = *watched_;
      lock.unlock();
      abort(detail::concat(late.what, " did not complete within ", late.timeout.count(),
                           " ms; peers that may have failed or not issued it: ", late.peers));
    }
  }
}

void MpiEngine::abort(const std::string& message) const {
  static std::atomic<bool> printed{false};
  if (!printed.exchange(true)) {
    std::string line = message;
    std::replace(line.begin(), line.end(), '\n', ' ');
    line = shorten_long_words(line);
    std::fprintf(stderr, "baton mpi: rank %d of %d: %s; ending the job (MPI_Abort)\n", world_rank_, world_size_,
                 line.c_str());
    std::fflush(stderr);
  }
  // Another thread may call MPI only at MPI_THREAD_MULTIPLE; otherwise the exit without
  // MPI_Finalize makes mpirun end the other processes.
  if (provided_ == MPI_THREAD_MULTIPLE || std::this_thread::get_id() == comm_thread_) MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

}  // namespace baton::comm
