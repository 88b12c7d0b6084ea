// Cluster descriptions (shipped and from JSON) and the alpha-beta communication cost model.
#include "parallel/plan/cluster.h"

#include <algorithm>
#include <cmath>

#include "parallel/plan/shipped_or_file.h"
#include "runtime/core/error.h"
#include "runtime/graph/json_fields.h"

namespace baton::parallel {

Cluster Cluster::topology(std::string name, DeviceSpec device, int nodes, int gpus_per_node, Link intra, Link inter) {
  BATON_CHECK(nodes >= 1 && gpus_per_node >= 1, "cluster '", name, "': expected nodes >= 1 and gpus_per_node >= 1");
  Cluster c;
  c.name_ = std::move(name);
  const int n = nodes * gpus_per_node;
  c.devices_.assign(n, device);
  for (int d = 0; d < n; ++d) c.node_of_.push_back(d / gpus_per_node);
  const Link self{"memory", 0, 0};
  c.links_.resize(static_cast<size_t>(n) * n);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      c.links_[static_cast<size_t>(a) * n + b] = a == b ? self : c.node_of_[a] == c.node_of_[b] ? intra : inter;
    }
  }
  return c;
}

const DeviceSpec& Cluster::device(int id) const {
  BATON_CHECK(id >= 0 && id < num_devices(), "cluster '", name_, "' has ", num_devices(), " devices; device ", id,
              " does not exist");
  return devices_[id];
}

int Cluster::node_of(int d) const {
  device(d);
  return node_of_[d];
}

const Link& Cluster::link(int a, int b) const {
  device(a);
  device(b);
  return links_[static_cast<size_t>(a) * num_devices() + b];
}

void Cluster::set_link(int a, int b, Link link) {
  device(a);
  device(b);
  BATON_CHECK(a != b, "cluster '", name_, "': a link needs two different devices (got ", a, " twice)");
  BATON_CHECK(link.bandwidth_gbs > 0, "cluster '", name_, "': link ", a, "-", b, " needs a bandwidth > 0");
  links_[static_cast<size_t>(a) * num_devices() + b] = link;
  links_[static_cast<size_t>(b) * num_devices() + a] = link;
}

double Cluster::p2p_ms(int64_t bytes, int a, int b) const {
  if (a == b || bytes <= 0) return 0;
  const Link& l = link(a, b);
  return l.latency_us * 1e-3 + static_cast<double>(bytes) / (l.bandwidth_gbs * 1e9) * 1e3;
}

double Cluster::allreduce_ms(int64_t bytes, std::span<const int> devices, AllReduceAlgorithm algorithm) const {
  const int n = static_cast<int>(devices.size());
  if (n <= 1 || bytes <= 0) return 0;
  // The ring runs through the devices in the order given; its slowest hop bounds the bandwidth.
  double bandwidth = 1e300, latency = 0;
  for (int i = 0; i < n; ++i) {
    const Link& l = link(devices[i], devices[(i + 1) % n]);
    bandwidth = std::min(bandwidth, l.bandwidth_gbs);
    latency = std::max(latency, l.latency_us);
  }
  const double seconds_per_byte = 1.0 / (bandwidth * 1e9);
  const double s = static_cast<double>(bytes);
  if (algorithm == AllReduceAlgorithm::ring) {
    return (2.0 * (n - 1) / n * s * seconds_per_byte + 2.0 * (n - 1) * latency * 1e-6) * 1e3;
  }
  const double depth = std::ceil(std::log2(static_cast<double>(n)));
  return (2.0 * s * seconds_per_byte + 2.0 * depth * latency * 1e-6) * 1e3;
}

namespace {

const Link kNvlink4{"nvlink", 370, 5};         // NVLink 4 (H100/H200 SXM): ~370 GB/s reached per direction
const Link kPcie5Host{"pcie", 25, 10};         // GPU to GPU through PCIe 5 host bridges
const Link kInfiniband400{"network", 45, 10};  // 400 Gb/s NDR InfiniBand per GPU

}  // namespace

std::vector<std::string> cluster_names() { return {"h200-nvlink-8", "pcie-8", "h200-2x8", "cpu-N"}; }

Cluster cluster_by_name(std::string_view name) {
  if (name == "h200-nvlink-8")
    return Cluster::topology("h200-nvlink-8", device_spec_by_name("h200"), 1, 8, kNvlink4, kNvlink4);
  if (name == "pcie-8")
    return Cluster::topology("pcie-8", device_spec_by_name("h100-pcie"), 1, 8, kPcie5Host, kPcie5Host);
  if (name == "h200-2x8") {
    return Cluster::topology("h200-2x8", device_spec_by_name("h200"), 2, 8, kNvlink4, kInfiniband400);
  }
  if (name.starts_with("cpu-")) {
    int n = 0;
    try {
      n = std::stoi(std::string(name.substr(4)));
    } catch (const std::exception&) {
      n = 0;
    }
    BATON_CHECK(n >= 1 && n <= 64, "cluster '", name, "': expected cpu-N with N in 1..64");
    const DeviceSpec cpu = device_spec_by_name("cpu");
    // Virtual CPU devices share one memory: a transfer is a memcpy (read + write).
    const Link memcpy_link{"memory", cpu.memory_bandwidth_gbs / 2, 2};
    return Cluster::topology(std::string(name), cpu, 1, n, memcpy_link, memcpy_link);
  }
  fail_unknown_shipped("cluster", name, cluster_names());
}

Cluster load_cluster(const std::string& name_or_file) {
  return load_shipped_or_file(name_or_file, cluster_from_json, cluster_by_name);
}

namespace {

nlohmann::json link_json(const Link& l) {
  return {{"kind", l.kind}, {"bandwidth_gbs", l.bandwidth_gbs}, {"latency_us", l.latency_us}};
}

Link link_from(const JsonFields& f, bool with_ends) {
  if (with_ends) {
    f.allow_only({"from", "to", "kind", "bandwidth_gbs", "latency_us"});
  } else {
    f.allow_only({"kind", "bandwidth_gbs", "latency_us"});
  }
  Link l{f.string("kind", "link"), f.non_negative("bandwidth_gbs"), f.non_negative("latency_us", 0)};
  if (l.bandwidth_gbs <= 0) f.fail("bandwidth_gbs", "a number > 0");
  return l;
}

}  // namespace

nlohmann::json cluster_to_json(const Cluster& c) {
  // Written as explicit per-pair links over a one-device-per-node topology would lose the node
  // structure, so the nodes are inferred back from node_of.
  int nodes = 0;
  for (int d = 0; d < c.num_devices(); ++d) nodes = std::max(nodes, c.node_of(d) + 1);
  const int per_node = c.num_devices() / nodes;
  nlohmann::json links = nlohmann::json::array();
  for (int a = 0; a < c.num_devices(); ++a) {
    for (int b = a + 1; b < c.num_devices(); ++b) {
      nlohmann::json l = link_json(c.link(a, b));
      l["from"] = a;
      l["to"] = b;
      links.push_back(l);
    }
  }
  nlohmann::json out = {{"name", c.name()},
                        {"device", device_spec_to_json(c.device(0))},
                        {"nodes", nodes},
                        {"gpus_per_node", per_node},
                        {"links", links}};
  if (c.concurrent_compute() > 0) out["concurrent_compute"] = c.concurrent_compute();
  return out;
}

void Cluster::set_concurrent_compute(int devices) {
  BATON_CHECK(devices >= 0, "cluster '", name_, "': concurrent_compute must be >= 0 (0: every device), got ", devices);
  concurrent_compute_ = devices;
}

Cluster cluster_from_json(const nlohmann::json& json, std::string_view source) {
  const JsonFields f(json, source, "");
  f.allow_only({"name", "device", "nodes", "gpus_per_node", "intra", "inter", "links", "concurrent_compute"});
  const nlohmann::json& device = f.at("device");
  DeviceSpec spec;
  if (device.is_string()) {
    try {
      spec = device_spec_by_name(device.get<std::string>());
    } catch (const Error& e) {
      f.fail("device", std::string("a shipped device name or an object (") + e.what() + ")");
    }
  } else {
    spec = device_spec_from_json(device, std::string(source) + " (field 'device')");
  }
  const int64_t nodes = f.integer("nodes", 1);
  const int64_t per_node = f.integer("gpus_per_node");
  if (nodes < 1 || nodes > 1024) f.fail("nodes", "an integer in 1..1024");
  if (per_node < 1 || per_node > 64) f.fail("gpus_per_node", "an integer in 1..64");
  // The cluster holds a link per pair of devices: 1024 devices are a million links (tens of MB).
  if (nodes * per_node > kMaxClusterDevices) {
    f.fail("gpus_per_node", "at most " + std::to_string(kMaxClusterDevices) + " devices in all (nodes " +
                                std::to_string(nodes) + " x gpus_per_node " + std::to_string(per_node) + " = " +
                                std::to_string(nodes * per_node) + ")");
  }
  const bool has_links = f.has("links");
  if (!f.has("intra") && !has_links) f.fail("intra", "a link {\"kind\", \"bandwidth_gbs\", \"latency_us\"}");
  const Link intra = f.has("intra") ? link_from(f.object("intra"), false) : Link{"link", 1, 0};
  if (nodes > 1 && !f.has("inter") && !has_links) {
    f.fail("inter", "a link between machines (the cluster has several nodes)");
  }
  const Link inter = f.has("inter") ? link_from(f.object("inter"), false) : intra;
  Cluster c = Cluster::topology(f.string("name", std::string(source)), spec, static_cast<int>(nodes),
                                static_cast<int>(per_node), intra, inter);
  if (has_links) {
    for (const JsonFields& l : f.objects("links")) {
      const int64_t a = l.integer("from"), b = l.integer("to");
      if (a < 0 || a >= c.num_devices()) l.fail("from", "a device id in 0.." + std::to_string(c.num_devices() - 1));
      if (b < 0 || b >= c.num_devices() || b == a) {
        l.fail("to", "a device id in 0.." + std::to_string(c.num_devices() - 1) + " other than 'from'");
      }
      c.set_link(static_cast<int>(a), static_cast<int>(b), link_from(l, true));
    }
  }
  const int64_t concurrent = f.integer("concurrent_compute", 0);
  if (concurrent < 0 || concurrent > 1'000'000) f.fail("concurrent_compute", "an integer >= 0 (0: every device)");
  c.set_concurrent_compute(static_cast<int>(concurrent));
  return c;
}

}  // namespace baton::parallel
