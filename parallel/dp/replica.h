// DataParallelEngine::Replica: one replica of the model in this process (its context, parameters
// laid out in gradient buckets, executor, optimiser and communicator), shared by the engine's files.
#pragma once

#include <memory>
#include <vector>

#include "parallel/dp/data_parallel_engine.h"
#include "parallel/replicas/replica_averaging.h"
#include "runtime/train/graph_contract.h"
#include "runtime/train/pending_loss.h"

namespace baton::parallel {

struct DataParallelEngine::Replica {
  Replica(const Graph& graph, const TrainConfig& config, Device device, DType dtype, const BucketPlan& plan,
          std::unique_ptr<comm::Communicator> communicator)
      : ctx(device),
        params(graph, graph.topological_order(), dtype, ctx, plan.layout()),
        executor(graph, graph.topological_order(), params),
        buckets(params),
        comm(std::move(communicator)) {
    ctx.set_allow_tf32(config.tf32);
    ctx.set_channels_last(config.channels_last);
    optimizer = make_optimizer(config.optimizer, params, ctx, "train config: optimizer");
  }

  // The sum (or mean) over every replica of each replica's `values`, in f64, back on the host: the
  // tensor travels on the replica's device (host backends take CPU tensors, NCCL device tensors).
  std::vector<double> all_reduce_values(const std::vector<double>& values, comm::ReduceOp op) {
    const Stream& stream = ctx.stream();
    const Tensor host = Tensor::from_vector<double>(values, Shape{static_cast<int64_t>(values.size())}, stream);
    const Tensor mine = host.to(ctx.device(), stream);
    comm->all_reduce(mine, op, stream)->wait_on(stream);
    return mine.to(Device::cpu(), stream).to_vector<double>(stream);
  }

  Context ctx;
  ParamStore params;
  Executor executor;
  GradientBuckets buckets;
  std::unique_ptr<comm::Communicator> comm;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<ReplicaAveraging> averaging;  // with model averaging
  // The last step's results: its loss (the mean over the replicas) and timeline.
  LossReadback readback;
  PendingLoss loss;
  ReplicaStepRecord last;
};

}  // namespace baton::parallel
