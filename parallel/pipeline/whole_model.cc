// WholeModel: copies by name between a host whole-model store and pipeline stages, and the sum over
// the pipeline's processes that gathers the stages.
#include "parallel/pipeline/whole_model.h"

#include <string>
#include <unordered_map>

#include "parallel/pipeline/transfer.h"
#include "runtime/core/error.h"
#include "runtime/train/checkpoint.h"

namespace baton::parallel {
namespace {

std::unordered_map<std::string, Tensor> by_name(NamedTensors named) {
  std::unordered_map<std::string, Tensor> out;
  for (auto& [name, tensor] : named) out.emplace(std::move(name), std::move(tensor));
  return out;
}

// Every tensor of `from` into the tensor of the same name in `to`, ordered on ctx's stream.
void copy_named(const NamedTensors& from, const std::unordered_map<std::string, Tensor>& to, Context& ctx) {
  for (const auto& [name, tensor] : from) copy_tensor(to.at(name), tensor, ctx);
}

}  // namespace

WholeModel::WholeModel(const Graph& graph, DType dtype, const nlohmann::json& optimizer) : ctx_(Device::cpu()) {
  params_ = std::make_unique<ParamStore>(graph, graph.topological_order(), dtype, ctx_);
  Tensor flat = params_->params_flat();
  flat.fill(0, ctx_.stream());
  for (const BufferEntry& b : params_->buffers()) params_->buffer(b.name).fill(0, ctx_.stream());
  if (!optimizer.is_null()) optimizer_ = make_optimizer(optimizer, *params_, ctx_, "whole-model optimizer");
  if (optimizer_) {
    for (auto [name, state] : optimizer_->state()) state.fill(0, ctx_.stream());
  }
}

void WholeModel::take(PipelineStage& stage, const Optimizer* stage_optimizer) {
  stage.context().synchronize();
  copy_named(model_tensors(stage.params()), by_name(model_tensors(*params_)), ctx_);
  if (optimizer_ && stage_optimizer != nullptr) {
    copy_named(optimizer_tensors(stage.params(), *stage_optimizer), by_name(optimizer_tensors(*params_, *optimizer_)),
               ctx_);
    optimizer_->set_steps(stage_optimizer->steps());
  }
  ctx_.synchronize();
}

void WholeModel::give(PipelineStage& stage, Optimizer* stage_optimizer) {
  Context& ctx = stage.context();
  const std::unordered_map<std::string, Tensor> mine = by_name(model_tensors(*params_));
  for (const auto& [name, tensor] : model_tensors(stage.params())) copy_tensor(tensor, mine.at(name), ctx);
  if (optimizer_ && stage_optimizer != nullptr) {
    const std::unordered_map<std::string, Tensor> state = by_name(optimizer_tensors(*params_, *optimizer_));
    for (const auto& [name, tensor] : optimizer_tensors(stage.params(), *stage_optimizer)) {
      copy_tensor(tensor, state.at(name), ctx);
    }
    stage_optimizer->set_steps(optimizer_->steps());
  }
  ctx.synchronize();
}

void WholeModel::gather(comm::Communicator& processes) {
  const Stream& stream = ctx_.stream();
  std::vector<comm::WorkHandle> works;
  works.push_back(processes.all_reduce(params_->params_flat(), comm::ReduceOp::sum, stream));
  for (const BufferEntry& b : params_->buffers()) {
    works.push_back(processes.all_reduce(params_->buffer(b.name), comm::ReduceOp::sum, stream));
  }
  if (optimizer_) {
    for (const auto& [name, state] : optimizer_->state()) {
      works.push_back(processes.all_reduce(state, comm::ReduceOp::sum, stream));
    }
    Tensor steps = Tensor::empty_host({1}, DType::i64);
    steps.data<int64_t>()[0] = optimizer_->steps();
    works.push_back(processes.broadcast(steps, 0, stream));
    for (const comm::WorkHandle& w : works) w->wait();
    optimizer_->set_steps(steps.data<int64_t>()[0]);
    return;
  }
  for (const comm::WorkHandle& w : works) w->wait();
}

}  // namespace baton::parallel
