// The replicas' communicators from the backend table, and their parameter fingerprint.
#include "parallel/replicas/replica_set.h"

#include <utility>

namespace baton::parallel {

std::vector<std::vector<std::unique_ptr<comm::Communicator>>> make_replica_communicators(
    const std::vector<std::vector<Device>>& stage_devices, comm::CommBackend backend,
    const std::function<std::string(size_t)>& ranks) {
  std::vector<std::vector<std::unique_ptr<comm::Communicator>>> by_stage;
  for (size_t s = 0; s < stage_devices.size(); ++s) {
    by_stage.push_back(comm::make_thread_communicators(stage_devices[s], backend, ranks(s)));
  }
  return by_stage;
}

ProcessReplica make_process_replica(comm::Communicator& processes, int stage, int replica, Device device,
                                    comm::CommBackend backend) {
  ProcessReplica mine;
  mine.host = processes.split(stage, replica);
  mine.tensors = comm::make_process_communicator(mine.host, device, backend);
  return mine;
}

std::vector<std::string> parameter_fingerprint(const std::vector<ParamEntry>& params, DType dtype) {
  std::vector<std::string> lines;
  for (const ParamEntry& e : params)
    lines.push_back(e.name + " " + std::string(dtype_name(dtype)) + " " + e.shape.str());
  return lines;
}

}  // namespace baton::parallel
