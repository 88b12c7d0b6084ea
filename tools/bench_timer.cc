// Benchmark timing: medians of timed calls after warm-up, the device a benchmark runs on, random
// inputs for a model and the JSON report.
#include "tools/bench_timer.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/random.h"
#include "runtime/core/atomic_file.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "runtime/core/stream.h"

namespace baton::cli {
namespace {

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

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
  return median(samples);
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

WallTimes time_wall(int warmup, int repeats, const std::function<void()>& step) {
  BATON_CHECK(repeats >= 1 && warmup >= 0, "bench: repeats must be >= 1 and warm-up >= 0");
  for (int i = 0; i < warmup; ++i) step();
  WallTimes t;
  std::vector<double> cpu;
  for (int i = 0; i < repeats; ++i) {
    const double cpu_start = process_cpu_ms();
    const auto start = std::chrono::steady_clock::now();
    step();
    const auto end = std::chrono::steady_clock::now();
    cpu.push_back(process_cpu_ms() - cpu_start);
    t.samples_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  t.median_ms = median(t.samples_ms);
  t.min_ms = *std::min_element(t.samples_ms.begin(), t.samples_ms.end());
  t.cpu_median_ms = median(cpu);
  return t;
}

std::string human_bytes(double bytes) {
  char text[32];
  if (bytes >= 1 << 20) {
    std::snprintf(text, sizeof(text), "%.0f MiB", bytes / (1 << 20));
  } else {
    std::snprintf(text, sizeof(text), "%.0f KiB", bytes / (1 << 10));
  }
  return text;
}

std::vector<Tensor> random_graph_inputs(const Graph& graph, int batch, Device x_device, Device labels_device) {
  std::vector<Tensor> inputs;
  for (ValueId v : graph.inputs()) {
    const ValueInfo& info = graph.value(v);
    std::vector<int64_t> dims = info.shape.dims();
    dims[0] = batch;
    if (info.dtype == DType::i64) {
      Context ctx(labels_device);
      const int64_t classes = graph.value(graph.outputs().back()).shape[-1];
      std::vector<int64_t> labels(static_cast<size_t>(batch));
      for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>((i * 7919 + 3) % classes);
      inputs.push_back(Tensor::from_vector(labels, Shape(dims), ctx.stream()));
      ctx.synchronize();
    } else {
      Context ctx(x_device);
      Tensor t = Tensor::empty(Shape(dims), info.dtype, ctx);
      kernels::normal(ctx, t, 7, static_cast<uint64_t>(v) << 32);
      ctx.synchronize();
      inputs.push_back(t);
    }
  }
  return inputs;
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
