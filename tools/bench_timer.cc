// Benchmark timing: medians of timed calls after warm-up, the device a benchmark runs on and its JSON report.
#include "tools/bench_timer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "runtime/core/atomic_file.h"
#include "runtime/core/device_info.h"
#include "runtime/core/stream.h"

namespace baton::cli {
namespace {

double timed_ms(Context& ctx, int calls, const std::function<void()>& op) {
  Event start(ctx.device()), stop(ctx.device());
  start.record(ctx.stream());
  for (int i = 0; i < calls; ++i) op();
  stop.record(ctx.stream());
  stop.synchronize();
  return static_cast<double>(start.elapsed_ms(stop));
}

}  // namespace

double time_median_ms(Context& ctx, const BenchTimerConfig& config, const std::function<void()>& op) {
  for (int i = 0; i < config.warmup; ++i) op();
  ctx.synchronize();
  const double single = std::max(timed_ms(ctx, 1, op), 1e-4);
  const int calls = static_cast<int>(std::clamp(std::ceil(config.min_sample_ms / single), 1.0, 1000.0));
  std::vector<double> samples;
  for (int r = 0; r < config.repeats; ++r) samples.push_back(timed_ms(ctx, calls, op) / calls);
  std::sort(samples.begin(), samples.end());
  const size_t mid = samples.size() / 2;
  return samples.size() % 2 == 1 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
}

std::string device_display_name(Device device) {
  const SystemInfo info = query_system_info();
  if (device.is_cpu()) return info.cpu.model;
  for (const GpuInfo& gpu : info.gpus) {
    if (gpu.index == device.index()) return gpu.name;
  }
  return device.str();
}

Device choose_bench_device(const std::string& requested) {
  if (!requested.empty()) {
    const Device device = Device::parse(requested);
    check_device(device);
    return device;
  }
  if (cuda_device_count() > 0) return Device::cuda(0);
  std::printf("no GPU found (%s); benchmarking %s\n", query_system_info().cuda_unavailable_reason.c_str(),
              Device::cpu().str().c_str());
  return Device::cpu();
}

nlohmann::json bench_report(Device device, const BenchTimerConfig& timing) {
  nlohmann::json report;
  report["device"] = device.str();
  report["device_name"] = device_display_name(device);
  report["timing"] = {{"warmup", timing.warmup}, {"repeats", timing.repeats}, {"statistic", "median"}};
  report["results"] = nlohmann::json::array();
  return report;
}

void write_bench_json(const std::string& path, const nlohmann::json& report) {
  if (path.empty()) return;
  write_file_atomically(path, report.dump(2) + "\n");
  std::printf("wrote %s\n", path.c_str());
}

}  // namespace baton::cli
