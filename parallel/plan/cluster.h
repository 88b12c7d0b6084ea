// Cluster: the devices a plan may use and the links between them, and the communication cost
// model over it: point-to-point transfers, ring and tree all-reduce (alpha-beta model).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/plan/device_spec.h"

namespace baton::parallel {

struct Link {
  std::string kind;          // "nvlink", "pcie", "network", "memory" (same device), ...
  double bandwidth_gbs = 0;  // achievable one-direction bandwidth, GB/s (1e9 bytes)
  double latency_us = 0;
};

enum class AllReduceAlgorithm { ring, tree };

// The most devices a cluster file may describe (nodes x gpus_per_node).
inline constexpr int64_t kMaxClusterDevices = 1024;

class Cluster {
 public:
  // `nodes` machines of `gpus_per_node` devices each, `intra` links inside a machine, `inter`
  // between machines.
  static Cluster topology(std::string name, DeviceSpec device, int nodes, int gpus_per_node, Link intra, Link inter);

  const std::string& name() const { return name_; }
  int num_devices() const { return static_cast<int>(devices_.size()); }
  const DeviceSpec& device(int id) const;
  int node_of(int device) const;
  // The link from `a` to `b` (a == b: the device's own memory, no transfer cost).
  const Link& link(int a, int b) const;
  // Overrides one pair (both directions), e.g. from a JSON "links" list.
  void set_link(int a, int b, Link link);
  // Devices of one node that compute at full speed at the same time; 0 (the default): every device
  // has hardware of its own. CPU virtual devices share the machine's cores: with W-thread workers on
  // C cores there are C / W places, and n computations on p places each progress at min(1, p / n) of
  // their speed (the simulator shares the places as the kernel time-slices cores).
  int concurrent_compute() const { return concurrent_compute_; }
  void set_concurrent_compute(int devices);

  // Milliseconds to move `bytes` from device `a` to device `b`: latency + bytes / bandwidth (0 if a == b).
  double p2p_ms(int64_t bytes, int a, int b) const;
  // Milliseconds to all-reduce `bytes` over `devices` (0 for one device). Ring: 2(n-1)/n * S/B +
  // 2(n-1) * latency, B the slowest link of the ring. Tree (double binary tree): 2 * S/B +
  // 2 * ceil(log2 n) * latency.
  double allreduce_ms(int64_t bytes, std::span<const int> devices,
                      AllReduceAlgorithm algorithm = AllReduceAlgorithm::ring) const;

 private:
  std::string name_;
  std::vector<DeviceSpec> devices_;
  std::vector<int> node_of_;
  std::vector<Link> links_;  // num_devices^2, row-major [a * n + b]
  int concurrent_compute_ = 0;
};

// Shipped: "h200-nvlink-8" (one node, 8 x H200 on NVLink 4), "pcie-8" (one node, 8 x H100 PCIe on
// PCIe 5 through host bridges), "h200-2x8" (2 nodes x 8 x H200, NVLink inside, 400 Gb/s InfiniBand
// per GPU between), and "cpu-N" (N virtual CPU devices sharing this machine's memory).
std::vector<std::string> cluster_names();
Cluster cluster_by_name(std::string_view name);
// A NAME from the list above or a JSON FILE:
// {"name", "device": NAME | {DeviceSpec fields}, "nodes", "gpus_per_node",
//  "intra": {"kind", "bandwidth_gbs", "latency_us"}, "inter": {...},
//  "links": [{"from", "to", "kind", "bandwidth_gbs", "latency_us"}, ...]   (optional per-pair overrides),
//  "concurrent_compute": devices of a node computing at once (optional; 0 or absent: all)}
Cluster load_cluster(const std::string& name_or_file);
nlohmann::json cluster_to_json(const Cluster& cluster);
Cluster cluster_from_json(const nlohmann::json& json, std::string_view source);

}  // namespace baton::parallel
