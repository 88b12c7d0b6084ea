// `baton devices`: the GPUs, driver and library versions, and the CPU. Exits 0 without a GPU.
#include <cstdio>
#include <string>

#include "kernels/cpu_engine.h"
#include "runtime/core/cpu_threads.h"
#include "runtime/core/device_info.h"
#include "tools/commands.h"

namespace baton::cli {
namespace {

double gib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

const char* or_none(const std::string& s) { return s.empty() ? "none" : s.c_str(); }

void print_devices() {
  const SystemInfo info = query_system_info();
  std::printf("CPU      cpu:0  %s, %d logical cores, %.1f GiB memory\n", info.cpu.model.c_str(), info.cpu.logical_cores,
              gib(info.cpu.memory_bytes));
  const kernels::CpuEngineInfo engine = kernels::cpu_engine_info();
  std::printf("CPU      float32 engine %s, batch norm loops %s, %d threads (BATON_NUM_THREADS)\n", engine.name.c_str(),
              engine.loops_isa.c_str(), cpu_thread_budget());
  if (!info.built_with_cuda) {
    std::printf("CUDA     not available: %s\n", info.cuda_unavailable_reason.c_str());
    return;
  }
  std::printf("Driver   CUDA %s\n", or_none(info.driver_version));
  std::printf("Runtime  CUDA %s, cuBLAS %s, cuDNN %s, NCCL %s\n", info.runtime_version.c_str(),
              or_none(info.cublas_version), or_none(info.cudnn_version), or_none(info.nccl_version));
  if (!info.cuda_available) {
    std::printf("GPUs     none found: %s; baton will run on the CPU\n", info.cuda_unavailable_reason.c_str());
    return;
  }
  for (const GpuInfo& gpu : info.gpus) {
    std::printf("GPU      cuda:%d  %s, %.1f GiB (%.1f GiB free), compute capability %d.%d, %d SMs", gpu.index,
                gpu.name.c_str(), gib(gpu.total_memory_bytes), gib(gpu.free_memory_bytes), gpu.compute_capability_major,
                gpu.compute_capability_minor, gpu.multiprocessors);
    if (gpu.memory_bandwidth_gbps > 0) std::printf(", %.0f GB/s peak memory bandwidth", gpu.memory_bandwidth_gbps);
    std::printf("\n");
  }
}

}  // namespace

void add_devices_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("devices", "List the GPUs, driver and CUDA library versions, and the CPU");
  cmd->callback(print_devices);
}

}  // namespace baton::cli
