// Profiles of a graph without running it: the DAG and byte sizes from shapes and Layer::cost, and
// (analytic) times from FLOPs and bytes over a device description's peak rates.
#pragma once

#include <string>
#include <vector>

#include "parallel/plan/device_spec.h"
#include "parallel/plan/profile.h"
#include "runtime/graph/graph.h"

namespace baton::parallel {

// Bytes of optimiser state per parameter byte and bytes moved per parameter byte by one step.
struct OptimizerTraffic {
  double state_factor = 1;    // SGD with momentum: 1 (momentum); AdamW: 2 (two moments)
  double bytes_per_byte = 5;  // SGD: read param, grad, momentum; write param, momentum
};
// "sgd" (with momentum) or "adamw"; other names are errors listing these.
OptimizerTraffic optimizer_traffic(const std::string& optimizer);

// The DAG in topological order, value sizes per sample, parameter bytes, saved and workspace bytes
// of `graph` (nodes' times empty, batch_sizes unset).
Profile profile_structure(const Graph& graph, const std::string& model);

struct AnalyticOptions {
  std::vector<int> batch_sizes = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  std::string optimizer = "sgd";
  bool allow_tf32 = true;  // f32 layers on tensor cores, as cuDNN/cuBLAS would with TF32 enabled
};

// Per node and pass: launch overhead + max(FLOPs / (peak x compute efficiency), bytes /
// (bandwidth x memory efficiency)), bytes being inputs + outputs + parameters (backward: twice the
// activations and parameters, for input and parameter gradients). The fixed overhead makes small
// micro-batches relatively slower, as on real devices.
Profile analytic_profile(const Graph& graph, const std::string& model, const DeviceSpec& device,
                         const AnalyticOptions& options = {});

}  // namespace baton::parallel
