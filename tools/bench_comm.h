// `baton bench comm`, shared pieces: the settings and the per-size measurement of baton's all-reduce
// beside its baseline, for the in-process backend (threads) and the MPI backend (processes).
#pragma once

#include <cstdint>
#include <vector>

#include "parallel/comm/mpi_runtime.h"

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

}  // namespace baton::cli
