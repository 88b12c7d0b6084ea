// Timing for benchmarks: warm-up, then repeated samples timed with events (CUDA events on GPUs,
// host time on CPU streams), reported as the median. Short ops are repeated inside each sample so
// one sample lasts at least ~0.5 ms, which keeps event resolution and launch gaps out of the number.
// Also wall-clock medians of whole steps, random inputs for a model, and the JSON report.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/graph/graph.h"

namespace baton::cli {

struct BenchTimerConfig {
  int warmup = 5;
  int repeats = 20;
  double min_sample_ms = 0.5;
};

// Median milliseconds of one call of `op` (which issues work on ctx's stream).
double time_median_ms(Context& ctx, const BenchTimerConfig& config, const std::function<void()>& op);

// The median of `values` (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);

// Wall-clock samples of `step` (each call returns once its work is complete), after warm-up.
struct WallTimes {
  double median_ms = 0, min_ms = 0;
  double cpu_median_ms = 0;  // this process's CPU time (all threads) per call, median
  std::vector<double> samples_ms;
};
WallTimes time_wall(int warmup, int repeats, const std::function<void()>& step);

// "4 KiB", "256 MiB".
std::string human_bytes(double bytes);

// One tensor per graph input, in graph.inputs() order, for `batch` samples: random normal data on
// `x_device`, and for an i64 input ("labels") classes spread over the model's outputs on
// `labels_device`.
std::vector<Tensor> random_graph_inputs(const Graph& graph, int batch, Device x_device, Device labels_device);

// "NVIDIA H200 (cuda:0)" or the CPU model for CPU devices.
std::string device_display_name(Device device);

// The device a benchmark runs on: `requested` when given (parsed and checked), else cuda:0 when a
// GPU is present, else the CPU (printing why there is no GPU).
Device choose_bench_device(const std::string& requested);

// A JSON report's common fields: device, device_name, timing, and an empty results array.
nlohmann::json bench_report(Device device, const BenchTimerConfig& timing);

// Writes `report` to `path` atomically and says so; nothing when `path` is empty (no --json).
void write_bench_json(const std::string& path, const nlohmann::json& report);

}  // namespace baton::cli
