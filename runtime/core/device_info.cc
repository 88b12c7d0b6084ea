// System discovery for `baton devices`: GPUs, driver and library versions, the CPU.
#include "runtime/core/device_info.h"

#include <fstream>
#include <string>
#include <thread>

#include "runtime/core/build_config.h"
#include "runtime/core/byte_size.h"
#include "runtime/core/error.h"

#if BATON_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include "runtime/core/cuda/cuda_check.h"
#endif

namespace baton {
namespace {

CpuInfo query_cpu() {
  CpuInfo cpu;
  cpu.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) cpu.model = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  if (cpu.model.empty()) cpu.model = "unknown CPU";
  cpu.memory_bytes = static_cast<size_t>(physical_memory_bytes());
  return cpu;
}

#if BATON_HAVE_CUDA
std::string cuda_version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string three_part(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}
#endif

}  // namespace

SystemInfo query_system_info() {
  SystemInfo info;
  info.cpu = query_cpu();
#if BATON_HAVE_CUDA
  info.built_with_cuda = true;
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  info.runtime_version = cuda_version_string(runtime);
  const size_t cudnn = cudnnGetVersion();  // 90102 = 9.1.2 for cuDNN 9
  info.cudnn_version = three_part(static_cast<int>(cudnn / 10000), static_cast<int>((cudnn % 10000) / 100),
                                  static_cast<int>(cudnn % 100));
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess) {
    info.nccl_version = three_part(nccl / 10000, (nccl % 10000) / 100, nccl % 100);
  }
  int cublas_major = 0, cublas_minor = 0, cublas_patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &cublas_major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &cublas_minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &cublas_patch) == CUBLAS_STATUS_SUCCESS) {
    info.cublas_version = three_part(cublas_major, cublas_minor, cublas_patch);
  }
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) info.driver_version = cuda_version_string(driver);
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    info.cuda_unavailable_reason = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    if (driver == 0) info.cuda_unavailable_reason += " (no NVIDIA driver is loaded on this machine)";
    return info;
  }
  if (count == 0) {
    info.cuda_unavailable_reason = "the driver reports no CUDA devices";
    return info;
  }
  info.cuda_available = true;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    BATON_CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
    GpuInfo gpu;
    gpu.index = i;
    gpu.name = prop.name;
    gpu.total_memory_bytes = prop.totalGlobalMem;
    gpu.compute_capability_major = prop.major;
    gpu.compute_capability_minor = prop.minor;
    gpu.multiprocessors = prop.multiProcessorCount;
    int memory_clock_khz = 0, bus_width_bits = 0;
    if (cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, i) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, i) == cudaSuccess) {
      gpu.memory_bandwidth_gbps = 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
    }
    size_t free_bytes = 0, total_bytes = 0;
    {
      CudaDeviceGuard guard(i);
      if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) gpu.free_memory_bytes = free_bytes;
    }
    info.gpus.push_back(gpu);
  }
#else
  info.cuda_unavailable_reason = "this baton was built without CUDA (BATON_CUDA=OFF or no CUDA toolkit at build time)";
#endif
  return info;
}

}  // namespace baton
