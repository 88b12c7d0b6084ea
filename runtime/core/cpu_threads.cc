// The CPU thread budget (BATON_NUM_THREADS or the process's cores), per-thread overrides, and the
// OpenMP loop behind parallel_for.
#include "runtime/core/cpu_threads.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>

#include "runtime/core/build_config.h"
#include "runtime/core/error.h"

#if BATON_HAVE_OPENMP
#include <omp.h>
#endif

namespace baton {
namespace {

constexpr int kMaxThreads = 4096;
thread_local int scoped_threads = 0;  // 0: no CpuThreadsScope in this thread

int affinity_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// BATON_NUM_THREADS's count, or 0 when it is not set.
int configured_threads() {
  const char* text = std::getenv("BATON_NUM_THREADS");
  if (text == nullptr || *text == '\0') return 0;
  return parse_thread_count(text);
}

std::atomic<int> core_share{0};  // share_cpu_cores's count; 0: none

// OpenMP's count for parallel regions the calling thread starts (oneDNN's and parallel_chunks').
void set_openmp_threads([[maybe_unused]] int threads) {
#if BATON_HAVE_OPENMP
  omp_set_num_threads(threads);
#endif
}

}  // namespace

int cpu_cores_available() { return affinity_cores(); }

int parse_thread_count(std::string_view value) {
  int threads = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), threads);
  BATON_CHECK(error == std::errc() && end == value.data() + value.size() && threads >= 1 && threads <= kMaxThreads,
              "environment variable BATON_NUM_THREADS is '", value, "', expected a whole number from 1 to ",
              kMaxThreads, " (the threads CPU kernels use)");
  return threads;
}

int cpu_thread_budget() {
  static const int configured = configured_threads();
  if (configured > 0) return configured;
  static const int cores = affinity_cores();
  const int share = core_share.load(std::memory_order_relaxed);
  return share > 0 ? std::min(share, cores) : cores;
}

void share_cpu_cores(int cores) { core_share.store(std::max(1, cores), std::memory_order_relaxed); }

int cpu_threads() {
  if (scoped_threads > 0) return scoped_threads;
  // A thread without a scope: OpenMP's own default would be every core; use the budget (again when
  // it changed, after share_cpu_cores).
  thread_local int configured = 0;
  const int budget = cpu_thread_budget();
  if (configured != budget) {
    set_openmp_threads(budget);
    configured = budget;
  }
  return budget;
}

CpuThreadsScope::CpuThreadsScope(int threads) : previous_(scoped_threads) {
  scoped_threads = std::max(1, threads);
  set_openmp_threads(scoped_threads);
}

CpuThreadsScope::~CpuThreadsScope() {
  scoped_threads = previous_;
  set_openmp_threads(previous_ > 0 ? previous_ : cpu_thread_budget());
}

int cpu_threads_per_worker(int workers) { return cpu_threads_per_worker({workers}); }

int cpu_threads_per_worker(std::initializer_list<int> nested_workers) {
  int threads = cpu_threads();
  for (const int workers : nested_workers) threads = std::max(1, threads / std::max(1, workers));
  return threads;
}

void parallel_chunks(int64_t chunks, const std::function<void(int64_t)>& chunk) {
  const int threads = static_cast<int>(std::min<int64_t>(cpu_threads(), chunks));
  if (threads <= 1) {
    for (int64_t i = 0; i < chunks; ++i) chunk(i);
    return;
  }
#if BATON_HAVE_OPENMP
  std::exception_ptr failure;
  std::once_flag first_failure;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < chunks; ++i) {
    try {
      chunk(i);
    } catch (...) {
      std::call_once(first_failure, [&] { failure = std::current_exception(); });
    }
  }
  if (failure) std::rethrow_exception(failure);
#else
  for (int64_t i = 0; i < chunks; ++i) chunk(i);
#endif
}

}  // namespace baton
