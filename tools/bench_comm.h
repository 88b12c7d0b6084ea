// `baton bench comm`, shared pieces: the settings and the per-size measurement of baton's all-reduce
// beside its baseline, for the in-process (threads), MPI (processes) and NCCL (GPUs) backends.
#pragma once

#include <barrier>
#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "parallel/comm/mpi_runtime.h"
#include "runtime/core/tensor.h"

namespace baton::cli {

struct CommBenchSettings {
  int ranks = 2;
  std::vector<int64_t> sizes;  // bytes, each a multiple of 4 (f32 elements)
  int warmup = 3, repeats = 20;
  comm::MpiReduction reduction = comm::MpiReduction::native;  // the mpi backend's
};

// One message size: seconds per all-reduce, each rank's median over the samples, then the mean over
// the ranks (nccl-tests' default); baton's and the baseline's measured side by side.
struct CommBenchRow {
  int64_t bytes = 0;
  int calls_per_sample = 1;  // all-reduces timed back to back in one sample
  double baton_s = 0, baseline_s = 0;
};

// All-reduces timed back to back in one sample: enough for about 8 MiB in all, at most 64.
int comm_calls_per_sample(int64_t bytes);

// settings.ranks threads of this process, each with its communicator of an in-process group and a
// buffer of its own. Baseline: the same threads summing in shared memory without baton (each its
// chunk of every buffer, written back to every buffer, a std::barrier between all-reduces).
std::vector<CommBenchRow> bench_comm_inproc(const CommBenchSettings& settings);

// One rank per process of the job (settings.ranks is the job's size), its communicator from
// runtime.world(settings.reduction). Baseline: MPI_Allreduce of the same buffer (MpiRuntime::time_raw_all_reduce).
// Collective; every rank returns the same rows.
std::vector<CommBenchRow> bench_comm_mpi(const CommBenchSettings& settings, const comm::MpiRuntime& runtime);

// settings.ranks GPUs of this process (cuda:0 .. cuda:ranks-1), one thread each with its communicator
// from make_nccl_communicators and a buffer on its GPU. Baseline: raw NCCL (comm::RawNcclAllReduce),
// ncclAllReduce of the same buffers for every GPU from one thread in one group. Needs a CUDA build.
std::vector<CommBenchRow> bench_comm_nccl(const CommBenchSettings& settings);

// Shared by the backends' measurements (bench_comm_runs.cc, bench_comm_nccl.cc).
// Rank r's element i of the host tensor `buffer` is (i mod 13) + r: small integers, so that every sum
// is exact in f32 whatever the order of summation.
void fill_pattern(const Tensor& buffer, int rank);
// After one all-reduce (sum) over `ranks`: ranks x (i mod 13) + ranks (ranks - 1) / 2 everywhere in
// the host tensor `buffer`; throws baton::Error naming `what` and the first wrong element otherwise.
void check_pattern(const Tensor& buffer, int ranks, const char* what);
// Samples of `a` and `b` (each returns seconds per all-reduce), alternating so that a change in the
// machine's load touches both; the first `warmup` of each are dropped. Returns their medians.
std::pair<double, double> paired_medians(const CommBenchSettings& s, const std::function<double()>& a,
                                         const std::function<double()>& b);
// One row per size of `s` from the seconds per all-reduce of baton and of the baseline.
std::vector<CommBenchRow> rows_from(const CommBenchSettings& s, const std::vector<double>& baton,
                                    const std::vector<double>& baseline);
double seconds_since(std::chrono::steady_clock::time_point start);
// rank_body(r, baton, baseline) for every rank r of `s` on a thread of its own: it fills its two
// vectors with one median per size. A rank that throws drops out of `sync` (so the others do not
// wait for it); the first failure by rank is rethrown after all have ended. Returns the rows of the
// means over the ranks.
using RankBody = std::function<void(int rank, std::vector<double>& baton, std::vector<double>& baseline)>;
std::vector<CommBenchRow> rows_over_rank_threads(const CommBenchSettings& s, std::barrier<>& sync,
                                                 const RankBody& rank_body);

}  // namespace baton::cli
