// Timing for benchmarks: warm-up, then repeated samples timed with events (CUDA events on GPUs,
// host time on CPU streams), reported as the median. Short ops are repeated inside each sample so
// one sample lasts at least ~0.5 ms, which keeps event resolution and launch gaps out of the number.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/core/context.h"

namespace baton::cli {

struct BenchTimerConfig {
  int warmup = 5;
  int repeats = 20;
  double min_sample_ms = 0.5;
};

// Median milliseconds of one call of `op` (which issues work on ctx's stream).
double time_median_ms(Context& ctx, const BenchTimerConfig& config, const std::function<void()>& op);

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
