// `baton bench dp`, shared pieces: the flags, the measured and predicted steps, and the report
// (a table on stdout and the JSON file) of tools/bench_dp_report.cc.
#pragma once

#include <string>
#include <vector>

#include "models/model_registry.h"
#include "runtime/graph/graph.h"
#include "runtime/train/train_config.h"
#include "tools/bench_timer.h"

namespace baton::cli {

inline constexpr double kDpBenchLr = 1e-4;  // small: the weights barely move over the timed steps

struct DpBenchFlags {
  std::string model = "resnet20";
  int batch = 64;  // global
  int steps = 10;
  int warmup = 2;
  int replicas = -1;  // not given: 2 in one process, the job's size under mpirun
  std::string json_path;
};

struct DpBenchSetup {
  DpBenchFlags f;
  int replicas = 2;
  bool mpi = false;
  int cores = 1;
  models::ModelOptions options;
  Graph graph;
  TrainConfig config;
};

// One engine's timed steps.
struct DpMeasured {
  int replicas = 1;
  WallTimes times;
  std::vector<double> hidden, allreduce_ms;  // per timed step, replica 0 of this process
  // Per timed step, every replica counted from the moment the last one took the bucket up
  // (hidden_transfer_fraction); empty when the replicas are in other processes.
  std::vector<double> hidden_transfer;
  std::vector<size_t> bucket_bytes;
};

// The simulator's steps for 1 and N replicas on a profile measured here, or why there are none.
struct DpPredicted {
  std::string unavailable;  // the reason; empty when available
  std::string cluster;
  double one = 0, replicated = 0, in_series = 0, core_bound = 0;
};

// Prints the table (rank 0) and writes the JSON of --json.
void report_dp_bench(const DpBenchSetup& s, const DpMeasured& one, const DpMeasured& many, const DpPredicted& p);

}  // namespace baton::cli
