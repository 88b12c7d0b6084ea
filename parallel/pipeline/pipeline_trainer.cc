// The Trainer's steps, evaluation and checkpoints through a PipelineExecutor's stages.
#include "parallel/pipeline/pipeline_trainer.h"

#include <algorithm>
#include <unordered_map>

#include "parallel/pipeline/transfer.h"
#include "runtime/core/error.h"
#include "runtime/train/graph_contract.h"
#include "runtime/train/optimizer.h"

namespace baton::parallel {

std::vector<Device> stage_devices(const Schedule& schedule, int num_stages, const std::vector<Device>& available) {
  BATON_CHECK(!available.empty(), "a pipeline needs at least one device");
  BATON_CHECK(schedule.devices >= 1, "the schedule has no pipeline positions");
  std::vector<Device> out;
  for (int k = 0; k < num_stages; ++k) {
    const int position = k % schedule.devices;
    out.push_back(available[static_cast<size_t>(position) % available.size()]);
  }
  return out;
}

PipelineTrainEngine::PipelineTrainEngine(const Graph& graph, const TrainConfig& config, Plan plan, Schedule schedule,
                                         PipelineTrainOptions options)
    : graph_(graph), options_(std::move(options)), optimizer_config_(config.optimizer) {
  check_trainable(graph, "PipelineTrainEngine");
  check_precision(graph, options_.precision, "PipelineTrainEngine");
  const int num = plan.num_stages();
  HybridOptions ho;
  ho.pipeline.dtype = options_.precision.master();
  if (options_.recompute) ho.pipeline.recompute.assign(static_cast<size_t>(num), true);
  ho.pipeline.deferred_batch_norm = options_.deferred_batch_norm;
  ho.pipeline.optimizer = config.optimizer;
  ho.pipeline.model = options_.model;
  ho.pipeline.comm_backend = options_.comm_backend;
  ho.grad_sync = options_.grad_sync;
  ho.sync.unused_parameters_ready = options_.unused_parameters_ready;
  ho.averaging = options_.averaging;
  if (across_processes()) {
    BATON_CHECK(!options_.devices.empty(), "a pipeline across processes needs this process's device");
    hybrid_ = std::make_unique<HybridExecutor>(graph, plan, schedule, *options_.world, options_.devices.front(), ho);
    comm::Communicator& world = *options_.world;
    set_processes({.index = hybrid_->local_group(), .count = hybrid_->groups()}, world.rank() == 0,
                  [&world](double value) {
                    Tensor sum = Tensor::empty_host({1}, DType::f64);
                    sum.data<double>()[0] = value;
                    world.all_reduce(sum, comm::ReduceOp::sum, Stream::create(Device::cpu()))->wait();
                    return sum.data<double>()[0];
                  });
  } else {
    std::vector<std::vector<Device>> devices = options_.group_devices;
    if (devices.empty()) devices = {options_.devices};
    hybrid_ = std::make_unique<HybridExecutor>(graph, plan, schedule, std::move(devices), ho);
  }
  for (auto& [g, s] : local_stages()) {
    Context& stage_ctx = hybrid_->group(g).stage(s).context();
    stage_ctx.set_allow_tf32(config.tf32);
    stage_ctx.set_channels_last(config.channels_last);
  }
}

std::vector<std::pair<int, int>> PipelineTrainEngine::local_stages() {
  std::vector<std::pair<int, int>> out;
  for (int g = 0; g < hybrid_->groups(); ++g) {
    if (hybrid_->local_group() >= 0 && g != hybrid_->local_group()) continue;
    PipelineExecutor& group = hybrid_->group(g);
    for (int s = 0; s < group.num_stages(); ++s) {
      if (group.local(s)) out.emplace_back(g, s);
    }
  }
  return out;
}

Context& PipelineTrainEngine::input_context() {
  const auto [g, s] = local_stages().front();
  return hybrid_->group(g).stage(s).context();
}

PipelineTrainEngine::~PipelineTrainEngine() = default;

EvalResult PipelineTrainEngine::evaluate(const data::Dataset& test, int64_t batch_size, int workers) {
  hybrid_->enter_agreement();  // model averaging: group 0 holds the agreed model
  const EvalResult result =
      across_processes()
          ? evaluate_across_processes(test, batch_size, workers)
          : evaluate_batches(input_context(), test, batch_size, workers, has_labels(graph_), EvalStop::on_request,
                             [&](const data::Batch& batch) {
                               // the batch is read on every stage's stream
                               input_context().stream().synchronize();
                               return eval_pieces(batch,
                                                  hybrid_->evaluate(batch_inputs(graph_, graph_.inputs(), batch)));
                             });
  hybrid_->leave_agreement();
  return result;
}

std::vector<EvalPiece> PipelineTrainEngine::eval_pieces(const data::Batch& batch, const PipelineOutputs& result) {
  // The loss and the prediction, micro-batch by micro-batch, on the stages that computed them.
  const bool classification = has_labels(graph_);
  const int prediction_stage = result.output_stage.at(kPredictionOutput);
  if (!executor().local(prediction_stage)) return {};  // another process's (across processes)
  Context& ctx = executor().stage(prediction_stage).context();
  const std::vector<data::Batch> micro_batches =
      classification ? batch.split(static_cast<int64_t>(result.micro_batch_sizes.size())) : std::vector<data::Batch>();
  std::vector<EvalPiece> pieces;
  for (size_t m = 0; m < result.micro_batch_sizes.size(); ++m) {
    EvalPiece piece;
    piece.ctx = &ctx;
    piece.loss = on_device_of(result.outputs[kLossOutput][m], ctx);  // the loss may come from another stage
    piece.samples = result.micro_batch_sizes[m];
    if (classification) {
      piece.logits = result.outputs[kPredictionOutput][m];
      piece.labels = on_device_of(micro_batches[m].targets, ctx);
    }
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

std::vector<CheckpointShard> PipelineTrainEngine::shards(int group) {
  PipelineExecutor& pipe = hybrid_->group(group);
  std::vector<CheckpointShard> out;
  for (int u = 0; u < pipe.num_stages(); ++u) {
    if (!pipe.first_replica(u)) continue;  // the same parameters and optimiser state as the first
    out.push_back({&pipe.stage_params(u), pipe.stage_optimizer(u), &pipe.stage(u).context()});
  }
  return out;
}

void PipelineTrainEngine::copy_first_replicas(PipelineExecutor& pipe) {
  std::vector<int> first;  // per plan stage: its first replica's unit
  for (int u = 0; u < pipe.num_stages(); ++u) {
    if (pipe.first_replica(u)) first.push_back(u);
  }
  for (int u = 0; u < pipe.num_stages(); ++u) {
    if (pipe.first_replica(u)) continue;
    const int from = first.at(static_cast<size_t>(pipe.plan_stage_of(u)));
    Context& ctx = pipe.stage(u).context();
    pipe.stage(from).context().synchronize();
    std::unordered_map<std::string, Tensor> source;
    for (auto& [name, tensor] : model_tensors(pipe.stage_params(from))) source.emplace(name, tensor);
    for (auto& [name, destination] : model_tensors(pipe.stage_params(u))) {
      destination.copy_from(source.at(name), ctx.stream());
    }
    Optimizer* mine = pipe.stage_optimizer(u);
    const Optimizer* theirs = pipe.stage_optimizer(from);
    if (mine != nullptr && theirs != nullptr) {
      auto to = mine->state();  // views of the state: copying into them writes it
      const auto state = theirs->state();
      for (size_t k = 0; k < to.size(); ++k) to[k].second.copy_from(state.at(k).second, ctx.stream());
      mine->set_steps(theirs->steps());
    }
    ctx.synchronize();
  }
}

std::string PipelineTrainEngine::save_checkpoint(CheckpointManager& manager, const CheckpointState& state) {
  hybrid_->enter_agreement();  // model averaging: every group holds the agreed model
  std::string saved;
  if (across_processes()) {
    saved = save_across_processes(manager, state, hybrid_->averaging_checkpoint_files());
  } else {
    for (int g = 0; g < hybrid_->groups(); ++g) hybrid_->group(g).raise_deferred_errors();
    // Group 0's: every group holds the same parameters (and, averaging, each replica's own state).
    saved = manager.save(shards(), state, hybrid_->averaging_checkpoint_files());
  }
  hybrid_->leave_agreement();
  return saved;
}

CheckpointState PipelineTrainEngine::load_checkpoint(const std::string& dir) {
  CheckpointState state;
  if (across_processes()) {
    state = load_across_processes(dir);
  } else {
    // Every group, and every replica of a stage, starts from the same parameters, buffers and
    // optimiser state.
    state = CheckpointManager::load(dir, shards());
    for (int g = 1; g < hybrid_->groups(); ++g) CheckpointManager::load(dir, shards(g));
    for (int g = 0; g < hybrid_->groups(); ++g) copy_first_replicas(hybrid_->group(g));
  }
  // Model averaging: each replica's own state over the loaded one (none stored: a restart).
  hybrid_->load_averaging_state(dir, state.step);
  return state;
}

void PipelineTrainEngine::load_weights(const std::string& safetensors_path) {
  if (across_processes()) return load_weights_across_processes(safetensors_path);
  Context host(Device::cpu());
  ParamStore whole(graph_, graph_.topological_order(), options_.precision.master(), host);
  baton::load_weights(safetensors_path, whole, host);
  std::unordered_map<std::string, Tensor> loaded;
  for (auto& [name, tensor] : model_tensors(whole)) loaded.emplace(name, tensor);
  for (int g = 0; g < hybrid_->groups(); ++g) {
    PipelineExecutor& pipe = hybrid_->group(g);
    for (int u = 0; u < pipe.num_stages(); ++u) {  // every replica of every stage
      Context& ctx = pipe.stage(u).context();
      for (auto& [name, destination] : model_tensors(pipe.stage_params(u))) {
        destination.copy_from(loaded.at(name), ctx.stream());
      }
      ctx.synchronize();  // `whole` goes away on return
    }
  }
  hybrid_->restart_averaging();
}

double PipelineTrainEngine::measured_step_ms() {
  const std::vector<double>& ms = step_ms();
  if (ms.empty()) return 0;
  std::vector<double> t(ms.size() > 1 ? ms.begin() + 1 : ms.begin(), ms.end());
  std::sort(t.begin(), t.end());
  const size_t n = t.size();
  return n % 2 == 1 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

}  // namespace baton::parallel
