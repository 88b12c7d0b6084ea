// Discovery: what GPUs, driver and CUDA libraries this machine has (for `baton devices`).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace baton {

struct GpuInfo {
  int index = 0;
  std::string name;
  size_t total_memory_bytes = 0;
  size_t free_memory_bytes = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
  double memory_bandwidth_gbps = 0;  // theoretical, from the memory clock and bus width (0 if unknown)
};

struct CpuInfo {
  std::string model;  // from /proc/cpuinfo where available
  int logical_cores = 0;
  size_t memory_bytes = 0;
};

struct SystemInfo {
  bool built_with_cuda = false;
  bool cuda_available = false;          // a driver and at least one GPU
  std::string cuda_unavailable_reason;  // why not, in words (empty when available)
  std::string driver_version;           // "12.8" (CUDA version the driver supports), empty if none
  std::string runtime_version;          // CUDA runtime baton was built against
  std::string cudnn_version;            // loaded library's version, e.g. "9.10.2"
  std::string cublas_version;
  std::string nccl_version;
  std::vector<GpuInfo> gpus;
  CpuInfo cpu;
};

// Never throws for a missing GPU or driver: that is reported in cuda_unavailable_reason.
SystemInfo query_system_info();

}  // namespace baton
