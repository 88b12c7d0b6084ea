// The CPU thread pool: how many threads a CPU op may use, and the parallel loop baton's own kernels
// run on. One pool serves everything: OpenMP's, which oneDNN uses too (docs/cpu.md).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string_view>

namespace baton {

// Threads this process uses for CPU compute: BATON_NUM_THREADS when set (a whole number from 1 to
// 4096; anything else throws baton::Error naming the variable, read once), else the cores the
// process may run on, or its share of them after share_cpu_cores.
int cpu_thread_budget();

// Processes of one machine whose CPU affinities overlap (mpirun with more processes than cores
// binds none) would each take every core, and their OpenMP threads would fight for them: the MPI
// runtime calls this with the cores that are this process's share (at least 1). Without
// BATON_NUM_THREADS the budget becomes min(share, the process's cores).
void share_cpu_cores(int cores);

// The cores this process may run on (its CPU affinity).
int cpu_cores_available();

// BATON_NUM_THREADS's value as a thread count: a whole number from 1 to 4096, else baton::Error
// naming the variable and the value.
int parse_thread_count(std::string_view value);

// Threads a CPU op issued by the calling thread uses: the innermost live CpuThreadsScope of this
// thread, else cpu_thread_budget().
int cpu_threads();

// While alive, CPU ops issued by the constructing thread use `threads` threads (at least 1); the
// pipeline's stage workers split the budget this way. Not movable: it restores on destruction, in
// the thread that made it.
class CpuThreadsScope {
 public:
  explicit CpuThreadsScope(int threads);
  ~CpuThreadsScope();
  CpuThreadsScope(const CpuThreadsScope&) = delete;
  CpuThreadsScope& operator=(const CpuThreadsScope&) = delete;

 private:
  int previous_;
};

// The share of the calling thread's cpu_threads() each of `workers` threads it starts to issue CPU
// ops at once should get (at least 1): pipeline stages, data-parallel replicas and hybrid groups
// split their caller's threads, so nested splits compose.
int cpu_threads_per_worker(int workers);
// The same through nested splits, outermost first: {groups, positions} gives what each pipeline
// position of each hybrid group computes with (for a planner predicting the executors' split).
int cpu_threads_per_worker(std::initializer_list<int> nested_workers);

// Calls chunk(i) for every i in [0, chunks), on up to cpu_threads() threads (OpenMP, static
// schedule); returns when all are done. The first exception a chunk throws is rethrown. Which chunk
// runs on which thread is unspecified: chunk(i) must depend on i only, so that results do not depend
// on the number of threads.
void parallel_chunks(int64_t chunks, const std::function<void(int64_t)>& chunk);

// Calls body(begin, end) over [0, n) in ranges of `grain` elements (the last may be shorter), in
// parallel when there is more than one range. The ranges depend on n and grain only.
template <typename Body>
void parallel_for(int64_t n, int64_t grain, Body&& body) {
  if (n <= 0) return;
  if (n <= grain) {
    body(int64_t{0}, n);
    return;
  }
  const int64_t chunks = (n + grain - 1) / grain;
  parallel_chunks(chunks, [&](int64_t i) { body(i * grain, i + 1 == chunks ? n : (i + 1) * grain); });
}

}  // namespace baton
