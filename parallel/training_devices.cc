// The devices a parallel run trains on (see parallel_training.h): the --devices list, the pipeline's
// and data parallelism's defaults, a hybrid plan's groups and stage replicas, and an MPI process's.
#include <sstream>

#include "parallel/parallel_training.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"

namespace baton::parallel {

namespace {

// The devices of a --devices list ("cpu:0,cpu:1"), each checked to exist.
std::vector<Device> listed_devices(const std::string& list_text) {
  std::vector<Device> out;
  std::stringstream list(list_text);
  for (std::string name; std::getline(list, name, ',');) {
    BATON_CHECK(!name.empty(), "--devices '", list_text, "': an empty device name");
    const Device d = Device::parse(name);
    check_device(d);
    out.push_back(d);
  }
  return out;
}

}  // namespace

std::vector<std::vector<Device>> hybrid_devices(const Plan& plan, const std::vector<Device>& available) {
  const int groups = plan_groups(plan);
  std::vector<std::vector<Device>> out(static_cast<size_t>(groups));
  for (const Stage& stage : plan.stages) {
    for (int g = 0; g < groups; ++g) {
      const int id = stage.devices.at(static_cast<size_t>(g));  // a cluster device: one of `available`
      out[static_cast<size_t>(g)].push_back(available[static_cast<size_t>(id) % available.size()]);
    }
  }
  return out;
}

std::vector<Device> stage_replica_devices(const Plan& plan, const std::vector<Device>& available) {
  std::vector<Device> out;
  for (const Stage& stage : plan.stages) {
    for (const int d : stage.devices) out.push_back(available.at(static_cast<size_t>(d) % available.size()));
  }
  return out;
}

std::vector<Device> pipeline_devices(const ParallelConfig& p, const TrainConfig& config) {
  if (!p.devices.empty()) return listed_devices(p.devices);
  std::vector<Device> out;
  const int gpus = cuda_device_count();
  const int positions = p.stages * std::max(1, p.groups);  // every group's pipeline positions
  if (config.device == "auto" && gpus > 0) {
    for (int i = 0; i < std::min(gpus, positions); ++i) out.push_back(Device::cuda(i));
    return out;
  }
  const Device d = config.device == "auto" ? Device::cpu() : Device::parse(config.device);
  check_device(d);
  if (d.is_cuda()) return {d};
  for (int i = 0; i < positions; ++i) out.push_back(Device::cpu(i));
  return out;
}

std::vector<Device> data_parallel_devices(const ParallelConfig& p, const TrainConfig& config) {
  std::vector<Device> out;
  if (!p.devices.empty()) {
    out = listed_devices(p.devices);
    BATON_CHECK(static_cast<int>(out.size()) == p.data_parallel, "--devices lists ", out.size(), " device(s) for ",
                p.data_parallel, " data-parallel replicas (give one per replica)");
  } else {
    const int gpus = cuda_device_count();
    BATON_CHECK(config.device == "auto" || config.device == "cpu" || config.device == "cuda",
                "--data-parallel with --device ", config.device,
                ": replicas run on cuda:0..N-1 (--device cuda), on the virtual CPU devices cpu:0..N-1 (--device cpu) "
                "or on the devices --devices lists");
    const bool on_gpus = config.device == "cuda" || (config.device == "auto" && gpus > 0);
    BATON_CHECK(!on_gpus || gpus >= p.data_parallel, "--data-parallel ", p.data_parallel, " on GPUs: this machine has ",
                gpus, " (use fewer replicas, --devices, or --device cpu for virtual CPU devices)");
    for (int i = 0; i < p.data_parallel; ++i) out.push_back(on_gpus ? Device::cuda(i) : Device::cpu(i));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    BATON_CHECK(out[i].is_cuda() == out.front().is_cuda(), "--data-parallel on ", out.front().str(), " and ",
                out[i].str(), ": every replica on a CPU device, or every one on a GPU");
    for (size_t k = 0; k < i; ++k) {
      BATON_CHECK(out[k] != out[i], "--devices lists ", out[i].str(), " twice: one replica per device");
    }
  }
  return out;
}

Device mpi_process_device(const TrainConfig& config, const comm::MpiRuntime& runtime) {
  const int gpus = cuda_device_count();
  const bool on_gpu = config.device == "cuda" || (config.device == "auto" && gpus > 0);
  BATON_CHECK(!on_gpu || runtime.local_rank() < gpus, "MPI process ", runtime.rank(), " is local rank ",
              runtime.local_rank(), " of ", runtime.local_size(), " on its node, which has ", gpus,
              " GPU(s): one process per GPU (or --device cpu)");
  return on_gpu ? Device::cuda(runtime.local_rank()) : Device::cpu(0);
}

}  // namespace baton::parallel
