// `baton bench pipeline`: the pipeline executor's host overhead per micro-batch per stage, a real
// model's throughput on one stage versus S stages, and the simulator's predicted step versus the
// measured one. Prints tables and writes JSON (--json). See docs/pipeline.md, "Benchmark".
#include "tools/bench_pipeline.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "tools/bench_timer.h"
#include "tools/commands.h"

namespace baton::cli {
namespace {

struct PipelineBenchFlags {
  std::string device;     // empty: cuda:0 when a GPU is present, else cpu
  std::string devices;    // several GPUs, one per stage
  int stages = 0;         // 0: 2 on the CPU, 4 on a GPU
  int micro_batches = 0;  // 0: 2 x stages
  std::string model;      // empty: resnet50 on a GPU, resnet20 on the CPU
  int batch = 0;          // 0: 64 on a GPU, 32 on the CPU (8 with --quick)
  int image_size = 0;     // 0: the model's default
  bool quick = false;
  std::string json_path;
};

PipelineBenchSettings settings_from(const PipelineBenchFlags& f) {
  PipelineBenchSettings s;
  s.device = choose_bench_device(f.device);
  const bool gpu = s.device.is_cuda();
  s.stages = f.stages > 0 ? f.stages : gpu ? 4 : 2;
  s.micro_batches = f.micro_batches > 0 ? f.micro_batches : 2 * s.stages;
  s.stage_devices = pipeline_stage_devices(s.device, f.devices, s.stages);
  s.quick = f.quick;
  s.model = !f.model.empty() ? f.model : gpu ? "resnet50" : "resnet20";
  s.batch = f.batch > 0 ? f.batch : gpu ? 64 : f.quick ? 8 : 32;
  s.image_size = f.image_size;
  if (f.quick) {
    s.overhead_warmup = 5;
    s.overhead_repeats = 30;
    s.warmup = 1;
    s.repeats = 2;
    s.profile_warmup = 1;
    s.profile_repeats = 1;
  } else if (gpu) {
    s.warmup = 3;
    s.repeats = 10;
    s.profile_warmup = 2;
    s.profile_repeats = 5;
  }
  return s;
}

void run_pipeline_bench(const PipelineBenchFlags& f) {
  const PipelineBenchSettings s = settings_from(f);
  check_pipeline_throughput_settings(s, f.micro_batches > 0);
  const unsigned cores = std::thread::hardware_concurrency();
  std::string devices;
  for (const Device& d : s.stage_devices) {
    if (!devices.empty()) devices += ',';
    devices += d.str();
  }
  std::printf("pipeline benchmark on %s (%s); %d stages on %s; %d micro-batches; host: %u hardware threads (%s)\n",
              s.device.str().c_str(), device_display_name(s.device).c_str(), s.stages, devices.c_str(), s.micro_batches,
              cores, query_system_info().cpu.model.c_str());
  nlohmann::json report = bench_report(s.device, {.warmup = s.warmup, .repeats = s.repeats});
  report.erase("results");
  report["benchmark"] = "pipeline";
  report["stages"] = s.stages;
  report["micro_batches"] = s.micro_batches;
  report["stage_devices"] = nlohmann::json::array();
  for (const Device& d : s.stage_devices) report["stage_devices"].push_back(d.str());
  report["quick"] = s.quick;
  report["host"] = {{"hardware_threads", cores}, {"cpu", query_system_info().cpu.model}};
  report["overhead"] = bench_pipeline_overhead(s);
  report["throughput"] = bench_pipeline_throughput(s);
  write_bench_json(f.json_path, report);
}

}  // namespace

std::vector<Device> pipeline_stage_devices(Device device, const std::string& devices_flag, int stages) {
  std::vector<Device> out;
  if (!devices_flag.empty()) {
    size_t start = 0;
    while (start <= devices_flag.size()) {
      const size_t comma = std::min(devices_flag.find(',', start), devices_flag.size());
      const Device d = Device::parse(devices_flag.substr(start, comma - start));
      check_device(d);
      out.push_back(d);
      start = comma + 1;
    }
    BATON_CHECK(static_cast<int>(out.size()) == stages, "--devices lists ", out.size(), " device(s) for ", stages,
                " stages (give one per stage)");
    return out;
  }
  for (int s = 0; s < stages; ++s) out.push_back(device.is_cpu() ? Device::cpu(s) : device);
  return out;
}

void add_bench_pipeline_command(CLI::App& bench) {
  auto f = std::make_shared<PipelineBenchFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "pipeline",
      "Pipeline executor: host overhead per micro-batch per stage, throughput of 1 vs S stages, simulator error");
  cmd->add_option("--device", f->device,
                  "cpu (stages on virtual devices cpu:0..cpu:S-1) or cuda:N (stages on streams of that GPU); default: "
                  "cuda:0 if present, else cpu");
  cmd->add_option("--devices", f->devices, "One device per stage instead, e.g. cuda:0,cuda:1 (several GPUs)");
  cmd->add_option("--stages", f->stages, "Pipeline stages S (default: 2 on the CPU, 4 on a GPU)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--micro-batches", f->micro_batches, "Micro-batches per step M (default: 2 x S)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--model", f->model,
                  "Model for the throughput part (default: resnet50 on a GPU, resnet20 on the CPU)");
  cmd->add_option("--batch", f->batch, "Mini-batch of the throughput part (default: 64 on a GPU, 32 on the CPU)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--image-size", f->image_size, "Input height and width (default: the model's)")
      ->check(CLI::Range(8, 4096));
  cmd->add_flag("--quick", f->quick, "A smoke run: batch 8 on the CPU, few repeats (figures are rough)");
  cmd->add_option("--json", f->json_path, "Also write every figure as JSON to this file (atomically)");
  cmd->callback([f] { run_pipeline_bench(*f); });
}

}  // namespace baton::cli
