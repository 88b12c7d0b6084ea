// The replicas of a pipeline's stages, across groups or processes (plain data parallelism: the
// replicas of a one-stage pipeline): their communicators, made from the backend table
// (comm/backend_table.h) whether the replicas are threads of this process or processes, and the
// parameter fingerprint they check agreement on before training.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "parallel/comm/backend_table.h"
#include "parallel/comm/communicator.h"
#include "runtime/core/device.h"
#include "runtime/graph/param_store.h"

namespace baton::parallel {

// Replicas that are threads of this process: stage s's replica r on stage_devices[s][r]. Returns, per
// stage, one communicator per replica (rank r), created eagerly in stage order; `backend` is checked
// by the backend table (inproc on CPU devices, NCCL on GPUs under auto). `ranks(s)` names stage s's
// replicas in errors ("hybrid stage 1's replicas").
std::vector<std::vector<std::unique_ptr<comm::Communicator>>> make_replica_communicators(
    const std::vector<std::vector<Device>>& stage_devices, comm::CommBackend backend,
    const std::function<std::string(size_t)>& ranks);

// A replica that is a process: its communicators over the processes holding the replicas of its
// stage, split from `processes` (collective over it: every process calls this together).
struct ProcessReplica {
  std::shared_ptr<comm::Communicator> host;     // rank `replica`, host messages (MPI's)
  std::shared_ptr<comm::Communicator> tensors;  // the same ranks for tensors on `device` (the table's row)
};
ProcessReplica make_process_replica(comm::Communicator& processes, int stage, int replica, Device device,
                                    comm::CommBackend backend);

// One line per parameter, "name dtype [shape]": what every replica of a model checks agreement on
// (comm::check_agreement) before it trains.
std::vector<std::string> parameter_fingerprint(const std::vector<ParamEntry>& params, DType dtype);

}  // namespace baton::parallel
