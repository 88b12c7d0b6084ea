// DeviceSpec: a device described by its peak rates, so plans for a GPU can be made on a machine
// without one. Shipped: H200, H100 (SXM, PCIe), A100 (SXM, PCIe), V100 (SXM, PCIe) and the local CPU
// (measured on the spot); other GPUs are measured on the spot too.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/device.h"

namespace baton::parallel {

struct DeviceSpec {
  std::string name;                 // "h200"
  std::string description;          // "NVIDIA H200 SXM (HBM3e 141 GB)"
  double peak_tflops_fp32 = 0;      // plain FP32 (CUDA cores)
  double peak_tflops_tf32 = 0;      // tensor cores, TF32 (dense); 0 where there are none
  double peak_tflops_half = 0;      // tensor cores, FP16/BF16 (dense)
  double memory_bandwidth_gbs = 0;  // GB/s (1e9 bytes)
  double memory_gb = 0;             // device memory, GB (1e9 bytes)
  // Fractions of peak a well-written layer reaches (GEMM-like work and memory-bound work).
  double compute_efficiency = 0.6;
  double memory_efficiency = 0.75;
  double launch_overhead_us = 5;  // per kernel (per node and pass)
  // The rates were measured on this machine ("cpu", measure_gpu_spec); false: datasheet peaks times the
  // assumed efficiencies above, which no measurement has calibrated (the shipped GPU descriptions).
  bool measured = false;
};

// Shipped names: h200, h100-sxm, h100-pcie, a100-sxm, a100-pcie, v100-sxm, v100-pcie, cpu.
std::vector<std::string> device_spec_names();
// A shipped description by name; "cpu" measures this machine (a GEMM and a copy, well under a
// second). Unknown names list the shipped ones.
DeviceSpec device_spec_by_name(std::string_view name);
// A GPU no shipped description matches, measured on the spot (a 4096^3 float32 GEMM through baton's
// kernel and a 256 MiB device copy, best of 3; no tensor-core rates), with `memory_gb` of memory.
DeviceSpec measure_gpu_spec(Device device, double memory_gb);
// A NAME from the list above or a JSON FILE with the DeviceSpec fields.
DeviceSpec load_device_spec(const std::string& name_or_file);
nlohmann::json device_spec_to_json(const DeviceSpec& spec);
DeviceSpec device_spec_from_json(const nlohmann::json& json, std::string_view source);

// Peak FLOP/s used for `dtype` ("f32" uses TF32 tensor cores when `allow_tf32` and the device has them;
// "f16"/"bf16" the half-precision rate).
double peak_flops(const DeviceSpec& spec, std::string_view dtype, bool allow_tf32);

}  // namespace baton::parallel
