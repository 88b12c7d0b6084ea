// Shipped device descriptions (vendor datasheet peaks, dense tensor-core rates) and the local CPU,
// measured on the spot.
#include "parallel/plan/device_spec.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <vector>

#include "kernels/gemm.h"
#include "parallel/plan/shipped_or_file.h"
#include "runtime/core/context.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"
#include "runtime/graph/json_fields.h"

namespace baton::parallel {
namespace {

DeviceSpec gpu(std::string name, std::string description, double fp32, double tf32, double half, double bandwidth,
               double memory) {
  DeviceSpec s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.peak_tflops_fp32 = fp32;
  s.peak_tflops_tf32 = tf32;
  s.peak_tflops_half = half;
  s.memory_bandwidth_gbs = bandwidth;
  s.memory_gb = memory;
  return s;
}

// Datasheet figures (NVIDIA): FP32, dense TF32 and FP16/BF16 tensor TFLOP/s, HBM GB/s, memory GB.
const std::vector<DeviceSpec>& shipped_gpus() {
  static const std::vector<DeviceSpec> specs = {
      gpu("h200", "NVIDIA H200 SXM, 141 GB HBM3e", 67, 494.5, 989.5, 4800, 141),
      gpu("h100-sxm", "NVIDIA H100 SXM, 80 GB HBM3", 67, 494.5, 989.5, 3350, 80),
      gpu("h100-pcie", "NVIDIA H100 PCIe, 80 GB HBM2e", 51, 378, 756, 2000, 80),
      gpu("a100-sxm", "NVIDIA A100 SXM, 80 GB HBM2e", 19.5, 156, 312, 2039, 80),
      gpu("a100-pcie", "NVIDIA A100 PCIe, 80 GB HBM2e", 19.5, 156, 312, 1935, 80),
      gpu("v100-sxm", "NVIDIA V100 SXM2, 32 GB HBM2", 15.7, 0, 125, 900, 32),
      gpu("v100-pcie", "NVIDIA V100 PCIe, 32 GB HBM2", 14, 0, 112, 900, 32),
  };
  return specs;
}

template <typename F>
double best_seconds(int repeats, F&& f) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// One n x n x n float32 product through baton's kernel on ctx's device, waited for.
std::function<void()> square_gemm(Context& ctx, int n) {
  Tensor a = Tensor::empty(Shape{n, n}, DType::f32, ctx);
  Tensor b = Tensor::empty(Shape{n, n}, DType::f32, ctx);
  Tensor c = Tensor::empty(Shape{n, n}, DType::f32, ctx);
  a.fill(0.5, ctx.stream());
  b.fill(0.25, ctx.stream());
  return [&ctx, a, b, c] {
    kernels::matmul(ctx, a, b, c, false, false);
    ctx.synchronize();
  };
}

// This machine: a 512^3 float32 GEMM through baton's CPU kernel and a 64 MiB memcpy, best of 3
// (about 0.2 s). Memory: the physical memory the system reports.
DeviceSpec measure_local_cpu() {
  Context ctx(Device::cpu());
  const int n = 512;
  const double gemm_s = best_seconds(3, square_gemm(ctx, n));
  const size_t bytes = size_t{64} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  const double copy_s = best_seconds(3, [&] { std::memcpy(dst.data(), src.data(), bytes); });

  DeviceSpec s;
  s.name = "cpu";
  s.description = "this machine's CPU (measured: 512^3 GEMM and 64 MiB copy)";
  s.peak_tflops_fp32 = 2.0 * n * n * n / gemm_s / 1e12;
  s.memory_bandwidth_gbs = 2.0 * bytes / copy_s / 1e9;  // read + write
  s.memory_gb = 0;
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) s.memory_gb = static_cast<double>(pages) * page_size / 1e9;
  // The measured rates are what layers reach already (the GEMM is the best case).
  s.compute_efficiency = 0.8;
  s.memory_efficiency = 0.8;
  s.launch_overhead_us = 1;
  s.measured = true;
  return s;
}

}  // namespace

DeviceSpec measure_gpu_spec(Device device, double memory_gb) {
  BATON_CHECK(device.is_cuda(), "measure_gpu_spec: ", device.str(), " is not a GPU");
  Context ctx(device);
  const int n = 4096;
  const std::function<void()> gemm = square_gemm(ctx, n);
  gemm();  // the first call loads the library's kernels
  const double gemm_s = best_seconds(3, gemm);
  const int64_t floats = int64_t{64} << 20;  // 256 MiB
  Tensor src = Tensor::empty(Shape{floats}, DType::f32, ctx);
  Tensor dst = Tensor::empty(Shape{floats}, DType::f32, ctx);
  src.fill(1, ctx.stream());
  const double copy_s = best_seconds(3, [&] {
    dst.copy_from(src, ctx.stream());
    ctx.synchronize();
  });

  DeviceSpec s;
  s.name = "measured-gpu";
  s.description = device.str() + " (measured: 4096^3 float32 GEMM and 256 MiB device copy)";
  s.peak_tflops_fp32 = 2.0 * n * n * n / gemm_s / 1e12;  // no tensor-core rates: TF32 and half use it too
  s.memory_bandwidth_gbs = 2.0 * static_cast<double>(floats) * 4 / copy_s / 1e9;  // read + write
  s.memory_gb = memory_gb;
  s.compute_efficiency = 0.8;
  s.memory_efficiency = 0.8;
  s.measured = true;
  return s;
}

std::vector<std::string> device_spec_names() {
  std::vector<std::string> names;
  for (const DeviceSpec& s : shipped_gpus()) names.push_back(s.name);
  names.push_back("cpu");
  return names;
}

DeviceSpec device_spec_by_name(std::string_view name) {
  if (name == "cpu") return measure_local_cpu();
  for (const DeviceSpec& s : shipped_gpus()) {
    if (s.name == name) return s;
  }
  fail_unknown_shipped("device description", name, device_spec_names());
}

DeviceSpec load_device_spec(const std::string& name_or_file) {
  return load_shipped_or_file(name_or_file, device_spec_from_json, device_spec_by_name);
}

nlohmann::json device_spec_to_json(const DeviceSpec& s) {
  return {{"name", s.name},
          {"description", s.description},
          {"peak_tflops_fp32", s.peak_tflops_fp32},
          {"peak_tflops_tf32", s.peak_tflops_tf32},
          {"peak_tflops_half", s.peak_tflops_half},
          {"memory_bandwidth_gbs", s.memory_bandwidth_gbs},
          {"memory_gb", s.memory_gb},
          {"compute_efficiency", s.compute_efficiency},
          {"memory_efficiency", s.memory_efficiency},
          {"launch_overhead_us", s.launch_overhead_us},
          {"measured", s.measured}};
}

DeviceSpec device_spec_from_json(const nlohmann::json& json, std::string_view source) {
  const JsonFields f(json, source, "");
  f.allow_only({"name", "description", "peak_tflops_fp32", "peak_tflops_tf32", "peak_tflops_half",
                "memory_bandwidth_gbs", "memory_gb", "compute_efficiency", "memory_efficiency", "launch_overhead_us",
                "measured"});
  DeviceSpec s;
  s.name = f.string("name");
  s.description = f.string("description", "");
  s.peak_tflops_fp32 = f.non_negative("peak_tflops_fp32");
  s.peak_tflops_tf32 = f.non_negative("peak_tflops_tf32", 0);
  s.peak_tflops_half = f.non_negative("peak_tflops_half", 0);
  s.memory_bandwidth_gbs = f.non_negative("memory_bandwidth_gbs");
  s.memory_gb = f.non_negative("memory_gb");
  s.compute_efficiency = f.non_negative("compute_efficiency", 0.6);
  s.memory_efficiency = f.non_negative("memory_efficiency", 0.75);
  s.launch_overhead_us = f.non_negative("launch_overhead_us", 5);
  s.measured = f.boolean("measured", false);
  if (s.peak_tflops_fp32 <= 0) f.fail("peak_tflops_fp32", "a number > 0");
  if (s.memory_bandwidth_gbs <= 0) f.fail("memory_bandwidth_gbs", "a number > 0");
  if (s.compute_efficiency <= 0 || s.compute_efficiency > 1) f.fail("compute_efficiency", "a fraction in (0, 1]");
  if (s.memory_efficiency <= 0 || s.memory_efficiency > 1) f.fail("memory_efficiency", "a fraction in (0, 1]");
  return s;
}

double peak_flops(const DeviceSpec& spec, std::string_view dtype, bool allow_tf32) {
  if ((dtype == "f16" || dtype == "bf16") && spec.peak_tflops_half > 0) return spec.peak_tflops_half * 1e12;
  if (dtype == "f32" && allow_tf32 && spec.peak_tflops_tf32 > 0) return spec.peak_tflops_tf32 * 1e12;
  return spec.peak_tflops_fp32 * 1e12;
}

}  // namespace baton::parallel
