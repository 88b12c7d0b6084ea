// The cluster a pipeline is planned on, from the devices it runs on: virtual CPU devices -> cpu-N;
// GPUs -> copies of the shipped description their name matches, or of one measured on the spot.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parallel/plan/cluster.h"
#include "runtime/core/device.h"

namespace baton::parallel {

// The shipped device description (device_spec_names) a GPU's reported name matches, e.g.
// "NVIDIA H100 80GB HBM3" -> "h100-sxm", "NVIDIA A100-PCIE-40GB" -> "a100-pcie"; empty when none does.
std::string device_spec_for_gpu(std::string_view gpu_name);

// `positions` pipeline positions on `gpus` GPUs described by `spec`, position p on GPU p mod gpus,
// in one machine: positions on one GPU pass activations through its memory, the others over the
// spec's interconnect (NVLink for SXM parts, PCIe otherwise). Named "<spec>-x<GPUs in use>".
Cluster gpu_cluster(const DeviceSpec& spec, int gpus, int positions);

// The cluster for `positions` pipeline positions on `devices` (position p on devices[p mod size]),
// decided by the first device: CPU -> "cpu-<positions>"; a GPU -> gpu_cluster of the description
// its name matches, or of one measured on the spot (measure_gpu_spec).
Cluster cluster_for_devices(const std::vector<Device>& devices, int positions);

}  // namespace baton::parallel
