// ReplicaAveraging: one data-parallel replica's model-averaging state and the meeting of the
// replicas every H steps: periodic and post-local SGD average the parameters, BMUF keeps the global
// model and its block momentum, EASGD the centre variable (docs/data-parallel.md, "Model averaging").
#pragma once

#include <cstdint>
#include <string>

#include "parallel/replicas/averaging_exchange.h"
#include "parallel/replicas/model_averaging.h"
#include "runtime/graph/param_store.h"
#include "runtime/train/safetensors.h"

namespace baton::parallel {

class ReplicaAveraging {
 public:
  // Collective over `comm` (the exchange's tree splits it). `options`, `params`, `ctx` and `comm`
  // must outlive it. Call restart() once the replicas hold the same parameters.
  ReplicaAveraging(const ModelAveraging& options, ParamStore& params, Context& ctx, comm::Communicator& comm);

  // The replicas' parameters are the same (initialised, loaded): BMUF's global model and EASGD's
  // centre become them, the block momentum zero.
  void restart();
  // After the optimiser of a step after which the replicas meet (ModelAveraging::averages_after):
  // every replica runs it, collectively.
  void meet();
  // Before an evaluation or a checkpoint: this replica holds the model to evaluate and save (the
  // replicas' mean for periodic and post-local once local steps have run, BMUF's global model,
  // EASGD's centre); `steps` the engine's steps so far. Collective.
  void enter_agreement(long long steps);
  // After it: BMUF and EASGD replicas go on from their own parameters (periodic: from the mean).
  void leave_agreement();

  // The parameters this replica goes on from: during an agreement, BMUF's and EASGD's replicas'
  // own (set aside), else the parameters themselves.
  const Tensor& continuing_parameters() const { return saved_ ? scratch_ : params_.params_flat(); }
  // The state the replicas share beyond their parameters, by name: BMUF's global model and block
  // momentum, EASGD's centre (none for periodic and post-local averaging). Equal on every replica.
  NamedTensors shared_state() const;
  // Sets that state from `file`, which holds shared_state()'s tensors with their dtypes and shapes,
  // each name after `prefix` (a resumed run's, instead of restart()).
  void load_shared_state(const SafetensorsFile& file, const std::string& prefix = "");

  const AveragingExchange& exchange() const { return exchange_; }
  int64_t meetings() const { return meetings_; }

 private:
  const ModelAveraging& options_;
  ParamStore& params_;
  Context& ctx_;
  int world_;
  AveragingExchange exchange_;
  Tensor global_;    // BMUF: the global model w_g; EASGD: the centre variable
  Tensor momentum_;  // BMUF: the block momentum v
  Tensor scratch_;   // EASGD: x_i - centre; during an agreement (BMUF, EASGD): the replica's own parameters
  bool saved_ = false;
  int64_t meetings_ = 0;
};

}  // namespace baton::parallel
