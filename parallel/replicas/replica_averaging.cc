// One replica's model averaging: periodic / post-local averages, BMUF block updates, EASGD elastic
// moves, and the model an evaluation or a checkpoint sees.
#include "parallel/replicas/replica_averaging.h"

#include "kernels/elementwise.h"
#include "runtime/core/error.h"

namespace baton::parallel {

ReplicaAveraging::ReplicaAveraging(const ModelAveraging& options, ParamStore& params, Context& ctx,
                                   comm::Communicator& comm)
    : options_(options),
      params_(params),
      ctx_(ctx),
      world_(comm.size()),
      exchange_(comm, options.exchange, options.nodes) {
  const Tensor& flat = params.params_flat();
  if (options.kind == Averaging::bmuf || options.kind == Averaging::easgd) {
    global_ = Tensor::empty(flat.shape(), flat.dtype(), ctx);
    scratch_ = Tensor::empty(flat.shape(), flat.dtype(), ctx);
  }
  if (options.kind == Averaging::bmuf) momentum_ = Tensor::empty(flat.shape(), flat.dtype(), ctx);
}

void ReplicaAveraging::restart() {
  if (global_.defined()) kernels::copy(ctx_, params_.params_flat(), global_);
  if (momentum_.defined()) kernels::fill(ctx_, momentum_, 0.0);
  saved_ = false;
}

NamedTensors ReplicaAveraging::shared_state() const {
  if (options_.kind == Averaging::bmuf) return {{"bmuf.global_model", global_}, {"bmuf.block_momentum", momentum_}};
  if (options_.kind == Averaging::easgd) return {{"easgd.centre", global_}};
  return {};
}

void ReplicaAveraging::load_shared_state(const SafetensorsFile& file, const std::string& prefix) {
  for (const auto& [name, tensor] : shared_state()) file.read_into(prefix + name, tensor, ctx_.stream());
  saved_ = false;
}

void ReplicaAveraging::meet() {
  const Tensor& x = params_.params_flat();
  ++meetings_;
  switch (options_.kind) {
    case Averaging::periodic:
    case Averaging::post_local:
      exchange_.all_reduce(ctx_, x, comm::ReduceOp::mean);
      return;
    case Averaging::bmuf: {
      // G = mean(x_i) - s, the replicas' mean change since the block's start s (w_g + mu v
      // Nesterov-style, else w_g); v = mu v + zeta G; w_g += v; the next block starts from
      // w_g + mu v (Nesterov-style) or from w_g.
      const double mu = options_.block_momentum_for(world_);
      kernels::sub(ctx_, x, global_, x);
      if (options_.block_nesterov) kernels::axpy(ctx_, -mu, momentum_, x);
      exchange_.all_reduce(ctx_, x, comm::ReduceOp::mean);
      kernels::axpby(ctx_, options_.block_lr, x, mu, momentum_, momentum_);
      kernels::axpy(ctx_, 1.0, momentum_, global_);
      if (options_.block_nesterov) {
        kernels::axpby(ctx_, mu, momentum_, 1.0, global_, x);
      } else {
        kernels::copy(ctx_, global_, x);
      }
      return;
    }
    case Averaging::easgd: {
      // From the same values before the move: d_i = x_i - centre; x_i -= alpha d_i;
      // centre += alpha sum_i d_i, alpha = beta / N.
      const double alpha = options_.elastic_beta / world_;
      kernels::sub(ctx_, x, global_, scratch_);
      kernels::axpy(ctx_, -alpha, scratch_, x);
      exchange_.all_reduce(ctx_, scratch_, comm::ReduceOp::sum);
      kernels::axpy(ctx_, alpha, scratch_, global_);
      return;
    }
    case Averaging::none:
      break;
  }
  BATON_FAIL("model averaging: meet() without a model-averaging variant");
}

void ReplicaAveraging::enter_agreement(long long steps) {
  switch (options_.kind) {
    case Averaging::periodic:
    case Averaging::post_local:
      // Post-local SGD's synchronous steps leave the replicas equal: nothing to average.
      if (options_.kind == Averaging::periodic || steps > options_.local_after) {
        exchange_.all_reduce(ctx_, params_.params_flat(), comm::ReduceOp::mean);
      }
      return;
    case Averaging::bmuf:
    case Averaging::easgd:
      BATON_CHECK(!saved_, "model averaging: an agreement inside an agreement");
      kernels::copy(ctx_, params_.params_flat(), scratch_);
      kernels::copy(ctx_, global_, params_.params_flat());
      saved_ = true;
      return;
    case Averaging::none:
      return;
  }
}

void ReplicaAveraging::leave_agreement() {
  if (!saved_) return;
  kernels::copy(ctx_, scratch_, params_.params_flat());
  saved_ = false;
}

}  // namespace baton::parallel
