// PipelineStage: building a stage's context, store and executor over its nodes; copying
// parameters and buffers by name between stores.
#include "parallel/pipeline/stage.h"

#include "parallel/pipeline/transfer.h"

namespace baton::parallel {

void copy_by_name(const ParamStore& names, ParamStore& dst, const ParamStore& src, Context& ctx) {
  for (const ParamEntry& e : names.params()) copy_tensor(dst.param(e.name), src.param(e.name), ctx);
  for (const BufferEntry& b : names.buffers()) copy_tensor(dst.buffer(b.name), src.buffer(b.name), ctx);
}

PipelineStage::PipelineStage(const Graph& graph, int index, std::vector<NodeId> nodes, Device device, DType dtype,
                             ExecutorOptions options, const ParamLayout& layout)
    : index_(index) {
  check_device(device);
  ctx_ = std::make_unique<Context>(device);
  params_ = std::make_unique<ParamStore>(graph, nodes, dtype, *ctx_, layout);
  executor_ = std::make_unique<Executor>(graph, std::move(nodes), *params_, options);
}

void PipelineStage::load_from(const ParamStore& source) {
  BATON_CHECK(source.dtype() == params_->dtype(), "pipeline stage ", index_, ": parameters of dtype ",
              dtype_name(source.dtype()), " cannot be loaded into a store of dtype ", dtype_name(params_->dtype()));
  copy_by_name(*params_, *params_, source, *ctx_);
}

void PipelineStage::start_training_step() {
  params_->zero_grads(*ctx_);
  executor_->discard_deferred_updates();
}

}  // namespace baton::parallel
