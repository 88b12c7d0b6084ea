// Choosing the cluster description from the devices in use (see cluster_for_devices.h).
#include "parallel/plan/cluster_for_devices.h"

#include <algorithm>
#include <cctype>

#include "runtime/core/device_info.h"
#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// Achievable one-direction GPU-to-GPU bandwidth by description (estimates from the interconnect
// generation: NVLink 4/3/2 for SXM parts, PCIe 5/4/3 through host bridges otherwise).
Link interconnect(const DeviceSpec& spec) {
  if (spec.name == "h200" || spec.name == "h100-sxm") return {"nvlink", 370, 5};
  if (spec.name == "a100-sxm") return {"nvlink", 250, 5};
  if (spec.name == "v100-sxm") return {"nvlink", 120, 5};
  if (spec.name == "h100-pcie") return {"pcie", 25, 10};
  if (spec.name == "v100-pcie") return {"pcie", 10, 10};
  return {"pcie", 20, 10};  // a100-pcie and GPUs measured on the spot: PCIe 4
}

}  // namespace

std::string device_spec_for_gpu(std::string_view gpu_name) {
  std::string name(gpu_name);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  const bool pcie = contains(name, "pcie") || contains(name, "nvl");  // H100 NVL is a PCIe card
  if (contains(name, "gh200")) return "";                             // Grace Hopper: not shipped
  if (contains(name, "h200")) return "h200";
  if (contains(name, "h100")) return pcie ? "h100-pcie" : "h100-sxm";
  if (contains(name, "a100")) return pcie ? "a100-pcie" : "a100-sxm";
  if (contains(name, "v100")) return pcie ? "v100-pcie" : "v100-sxm";
  return "";
}

Cluster gpu_cluster(const DeviceSpec& spec, int gpus, int positions) {
  BATON_CHECK(gpus >= 1 && positions >= 1, "gpu_cluster: expected at least one GPU and one position (got ", gpus,
              " and ", positions, ")");
  const Link link = interconnect(spec);
  Cluster cluster =
      Cluster::topology(spec.name + "-x" + std::to_string(std::min(gpus, positions)), spec, 1, positions, link, link);
  // Stages sharing a GPU (each on its own stream) hand activations over in its memory (read + write).
  const Link same_gpu{"memory", spec.memory_bandwidth_gbs / 2, 2};
  for (int a = 0; a < positions; ++a) {
    for (int b = a + gpus; b < positions; b += gpus) cluster.set_link(a, b, same_gpu);
  }
  return cluster;
}

Cluster cluster_for_devices(const std::vector<Device>& devices, int positions) {
  BATON_CHECK(!devices.empty(), "a pipeline needs at least one device");
  const Device first = devices.front();
  if (!first.is_cuda()) return cluster_by_name("cpu-" + std::to_string(positions));
  const SystemInfo info = query_system_info();
  const auto gpu =
      std::find_if(info.gpus.begin(), info.gpus.end(), [&](const GpuInfo& g) { return g.index == first.index(); });
  BATON_CHECK(gpu != info.gpus.end(), first.str(), ": no such GPU (", info.gpus.size(), " found)");
  const std::string shipped = device_spec_for_gpu(gpu->name);
  const DeviceSpec spec = shipped.empty() ? measure_gpu_spec(first, static_cast<double>(gpu->total_memory_bytes) / 1e9)
                                          : device_spec_by_name(shipped);
  return gpu_cluster(spec, static_cast<int>(devices.size()), positions);
}

}  // namespace baton::parallel
