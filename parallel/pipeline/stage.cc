// PipelineStage implementation.
#include "parallel/pipeline/stage.h"

#include "parallel/pipeline/transfer.h"

namespace baton::parallel {

PipelineStage::PipelineStage(const Graph& graph, int index, std::vector<NodeId> nodes, Device device, DType dtype,
                             ExecutorOptions options)
    : index_(index) {
  check_device(device);
  ctx_ = std::make_unique<Context>(device);
  params_ = std::make_unique<ParamStore>(graph, nodes, dtype, *ctx_);
  executor_ = std::make_unique<Executor>(graph, std::move(nodes), *params_, options);
}

void PipelineStage::load_from(const ParamStore& source) {
  BATON_CHECK(source.dtype() == params_->dtype(), "pipeline stage ", index_, ": parameters of dtype ",
              dtype_name(source.dtype()), " cannot be loaded into a store of dtype ", dtype_name(params_->dtype()));
  for (const ParamEntry& e : params_->params()) copy_tensor(params_->param(e.name), source.param(e.name), *ctx_);
  for (const BufferEntry& b : params_->buffers()) copy_tensor(params_->buffer(b.name), source.buffer(b.name), *ctx_);
}

}  // namespace baton::parallel
