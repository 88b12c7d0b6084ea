// The cluster a pipeline is planned on, from its devices: GPU names matched to the shipped
// descriptions, GPU clusters linked by interconnect or shared memory, cpu-N for CPU devices.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "parallel/plan/cluster_for_devices.h"

namespace baton::parallel {
namespace {

TEST(ClusterForDevices, GpuNamesMatchTheShippedDescriptions) {
  // Names as CUDA reports them (cudaDeviceProp::name); "" for no shipped description (measured).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"NVIDIA H200", "h200"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA H100 NVL", "h100-pcie"},
      {"NVIDIA A100-SXM4-80GB", "a100-sxm"},
      {"NVIDIA A100 80GB PCIe", "a100-pcie"},
      {"NVIDIA A100-PCIE-40GB", "a100-pcie"},
      {"Tesla V100-SXM2-32GB", "v100-sxm"},
      {"Tesla V100-PCIE-16GB", "v100-pcie"},
      {"NVIDIA GH200 480GB", ""},
      {"NVIDIA L4", ""},
      {"NVIDIA GeForce RTX 4090", ""},
      {"", ""},
  };
  for (const auto& [name, expected] : cases) EXPECT_EQ(device_spec_for_gpu(name), expected) << name;
}

TEST(ClusterForDevices, GpusAreLinkedByTheirInterconnectAndSharedOnesThroughMemory) {
  const DeviceSpec h200 = device_spec_by_name("h200");
  const Cluster two = gpu_cluster(h200, 2, 2);
  EXPECT_EQ(two.name(), "h200-x2");
  ASSERT_EQ(two.num_devices(), 2);
  EXPECT_EQ(two.device(1).name, "h200");
  EXPECT_EQ(two.link(0, 1).kind, "nvlink");

  // 4 positions on 2 GPUs: positions 0 and 2 share cuda:0, 1 and 3 share cuda:1.
  const Cluster shared = gpu_cluster(h200, 2, 4);
  EXPECT_EQ(shared.name(), "h200-x2");
  ASSERT_EQ(shared.num_devices(), 4);
  EXPECT_EQ(shared.link(0, 2).kind, "memory");
  EXPECT_EQ(shared.link(3, 1).kind, "memory");
  EXPECT_DOUBLE_EQ(shared.link(0, 2).bandwidth_gbs, h200.memory_bandwidth_gbs / 2);
  EXPECT_EQ(shared.link(0, 1).kind, "nvlink");
  EXPECT_EQ(shared.link(1, 2).kind, "nvlink");

  // Every stage on one PCIe GPU (one stream each); more GPUs than positions name the GPUs in use.
  const Cluster one = gpu_cluster(device_spec_by_name("a100-pcie"), 1, 3);
  EXPECT_EQ(one.name(), "a100-pcie-x1");
  EXPECT_EQ(one.link(0, 2).kind, "memory");
  EXPECT_EQ(gpu_cluster(device_spec_by_name("h100-pcie"), 8, 2).name(), "h100-pcie-x2");
  EXPECT_EQ(gpu_cluster(device_spec_by_name("h100-pcie"), 8, 2).link(0, 1).kind, "pcie");
}

TEST(ClusterForDevices, VirtualCpuDevicesGiveCpuN) {
  EXPECT_EQ(cluster_for_devices({Device::cpu(0), Device::cpu(1)}, 2).name(), "cpu-2");
  // Stages beyond the devices share them; the cluster has one device per pipeline position.
  const Cluster c = cluster_for_devices({Device::cpu(0)}, 3);
  EXPECT_EQ(c.name(), "cpu-3");
  EXPECT_EQ(c.num_devices(), 3);
}

}  // namespace
}  // namespace baton::parallel
