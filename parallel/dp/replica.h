// DataParallelEngine::Replica: one replica of the model in this process (its context, parameters
// laid out in gradient buckets, executor, optimiser and communicator), shared by the engine's files.
#pragma once

#include <memory>

#include "parallel/dp/data_parallel_engine.h"
#include "runtime/train/graph_contract.h"

namespace baton::parallel {

struct DataParallelEngine::Replica {
  Replica(const Graph& graph, const TrainConfig& config, Device device, const BucketPlan& plan,
          std::unique_ptr<comm::Communicator> communicator)
      : ctx(device),
        params(graph, graph.topological_order(), parameter_dtype(graph), ctx, plan.layout()),
        executor(graph, graph.topological_order(), params),
        buckets(params),
        comm(std::move(communicator)) {
    ctx.set_allow_tf32(config.tf32);
    optimizer = make_optimizer(config.optimizer, params, ctx, "train config: optimizer");
  }

  Context ctx;
  ParamStore params;
  Executor executor;
  GradientBuckets buckets;
  std::unique_ptr<comm::Communicator> comm;
  std::unique_ptr<Optimizer> optimizer;
  // The last step's results.
  double loss = 0;
  ReplicaStepRecord last;
};

namespace detail {

// Values as a 1-d f64 tensor on the host (reduced across replicas).
inline Tensor host_scalars(const std::vector<double>& values, const Stream& stream) {
  return Tensor::from_vector<double>(values, Shape{static_cast<int64_t>(values.size())}, stream);
}

// A scalar tensor (f32 or f64, any device) read on the host.
inline double scalar_value(const Tensor& t, const Stream& stream) {
  const Tensor host = t.to(Device::cpu(), stream);
  return t.dtype() == DType::f64 ? host.to_vector<double>(stream)[0] : host.to_vector<float>(stream)[0];
}

}  // namespace detail

}  // namespace baton::parallel
