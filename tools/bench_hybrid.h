// `baton bench hybrid` (bench_hybrid.cc: the runs; bench_hybrid_report.cc: layouts, trace sums and
// the table and JSON): its flags, one timed configuration, and the shared pieces.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "parallel/plan/trace.h"
#include "tools/bench_timer.h"

namespace baton::cli::hybrid_bench {

inline constexpr double kLr = 1e-4;  // small: the weights barely move over the timed steps

struct Flags {
  std::string model = "resnet20";
  int batch = 64;
  int steps = 5;
  int warmup = 1;
  std::string layouts = "1x2,2x1,2x2";
  int micro_batches = 2;  // per group
  std::string schedule = "1f1b";
  std::string json_path;
};

struct Layout {
  int groups = 1, stages = 1;
  std::string name() const { return std::to_string(groups) + "x" + std::to_string(stages); }
};

// One timed configuration: a layout under one strategy.
struct Row {
  Layout layout;
  std::string strategy;  // "none" for one group
  WallTimes times;
  double messages = 0, bytes = 0, allreduce_ms = 0, hidden = 1;  // per step, group 0, means over the timed steps
  double predicted_ms = 0, core_bound_ms = 0;
  std::string unpredicted;  // why there is no prediction
};

// "1x2,2x2" -> layouts; errors name the flag and the bad item.
std::vector<Layout> parse_layouts(const std::string& text);

using Spans = std::vector<std::pair<double, double>>;  // [start, end) intervals, in microseconds

// The forward and backward intervals of `events`, each shifted by `shift_us`.
Spans compute_spans(const std::vector<parallel::TraceEvent>& events, double shift_us = 0);
// Adds the all-reduces of `events` (shifted by `shift_us`) to `row`'s sums, and how much of their time
// falls inside `compute` (any order, overlapping) to `hidden_us` of `total_us`.
void add_allreduces(const std::vector<parallel::TraceEvent>& events, double shift_us, Spans compute, Row& row,
                    double& hidden_us, double& total_us);

// The table on stdout and, with --json, the JSON file. `processes`: 0 in one process, else the
// number of processes of the job.
void report(const Flags& f, const std::vector<Row>& rows, int cores, int processes);

}  // namespace baton::cli::hybrid_bench
