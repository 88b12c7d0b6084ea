// PipelineExecutor: checks the plan and schedule, builds the stages, their routing and optimisers
// once; loads and stores parameters; each step and evaluation is one PipelineRun.
#include "parallel/pipeline/pipeline_executor.h"

#include <string>

#include "kernels/deferred_checks.h"
#include "parallel/analytic_profile.h"
#include "runtime/train/optimizer.h"

namespace baton::parallel {
namespace {

// The plan against the graph, the schedule against the plan: returns the plan's stage consumers.
std::vector<std::vector<int>> check_plan_and_schedule(const Graph& graph, const Plan& plan, const Schedule& schedule,
                                                      const PipelineOptions& options) {
  const int num = plan.num_stages();
  for (int s = 0; s < num; ++s) {
    const int replicas = plan.stages[static_cast<size_t>(s)].replicas;
    BATON_CHECK(replicas == 1 || (!options.processes && !options.group_sync.active()), "pipeline stage ", s, " has ",
                replicas,
                " replicas: replicated stages run in one process and not inside a hybrid group (groups replicate "
                "every stage)");
    BATON_CHECK(schedule.replicas_of(s) == replicas, "the schedule gives stage ", s, " ", schedule.replicas_of(s),
                " replica(s) but the plan has ", replicas, " (make the schedule with the plan's replicas)");
  }
  const std::string& model = options.model;
  const Profile profile = profile_structure(graph, model);
  validate_plan(plan, profile);
  BATON_CHECK(schedule.stages == num, "the schedule has ", schedule.stages, " stages but the plan has ", num);
  BATON_CHECK(schedule.micro_batches == plan.micro_batches, "the schedule has ", schedule.micro_batches,
              " micro-batches but the plan has ", plan.micro_batches);
  BATON_CHECK(static_cast<int>(schedule.programs.size()) == schedule.devices, "the schedule has ",
              schedule.programs.size(), " instruction lists for ", schedule.devices, " pipeline positions");
  std::vector<std::vector<int>> consumers = stage_consumers(plan, profile);
  try {
    validate_schedule(schedule, consumers);
  } catch (Error& e) {
    e.add_context("while checking the schedule against the plan's stages before running it");
    throw;
  }
  return consumers;
}

// The pipeline position of every stage: the one whose instruction list runs it.
std::vector<int> positions_of_stages(const Schedule& schedule) {
  std::vector<int> positions(static_cast<size_t>(schedule.stages), -1);
  for (size_t p = 0; p < schedule.programs.size(); ++p) {
    for (const Instruction& ins : schedule.programs[p])
      positions.at(static_cast<size_t>(ins.stage)) = static_cast<int>(p);
  }
  return positions;
}

// Across processes: one rank per position, and no stage without instructions.
void check_processes(const comm::Communicator* processes, const Schedule& schedule, const std::vector<int>& positions) {
  if (processes == nullptr) return;
  BATON_CHECK(processes->size() == schedule.devices,
              "a pipeline across processes needs one process per pipeline "
              "position: the schedule has ",
              schedule.devices, " positions, the communicator ", processes->size(), " ranks");
  for (size_t s = 0; s < positions.size(); ++s) {
    BATON_CHECK(positions[s] >= 0, "pipeline stage ", s, " has no instructions in the schedule");
  }
}

// One PipelineStage per plan stage this process runs, over its nodes, on its device (null for the
// stages of other processes).
std::vector<std::unique_ptr<PipelineStage>> make_stages(const Graph& graph, const Plan& plan,
                                                        const std::vector<Device>& devices,
                                                        const PipelineOptions& options,
                                                        const std::vector<int>& positions) {
  const int num = plan.num_stages();
  BATON_CHECK(static_cast<int>(devices.size()) == num, "the pipeline has ", num, " stages but ", devices.size(),
              " devices were given (one per stage)");
  BATON_CHECK(options.recompute.empty() || static_cast<int>(options.recompute.size()) == num,
              "PipelineOptions::recompute has ", options.recompute.size(), " entries for ", num, " stages");
  const std::vector<NodeId> order = graph.topological_order();
  std::vector<std::unique_ptr<PipelineStage>> stages;
  for (int s = 0; s < num; ++s) {
    if (options.processes && positions[static_cast<size_t>(s)] != options.processes->rank()) {
      stages.push_back(nullptr);
      continue;
    }
    std::vector<NodeId> nodes;
    for (int i : plan.stages[static_cast<size_t>(s)].nodes) nodes.push_back(order.at(static_cast<size_t>(i)));
    const ExecutorOptions executor{.recompute = !options.recompute.empty() && options.recompute[static_cast<size_t>(s)],
                                   .defer_buffer_updates = options.deferred_batch_norm};
    const ParamLayout layout = stage_layout(graph, nodes, options.dtype, options.group_sync);
    stages.push_back(std::make_unique<PipelineStage>(graph, s, std::move(nodes), devices[static_cast<size_t>(s)],
                                                     options.dtype, executor, layout));
  }
  return stages;
}

// A hybrid group: one communicator per stage (per local stage across processes), and every stage's
// all_reduce in the schedule.
void check_group_sync(const GroupSync& sync, const Schedule& schedule,
                      const std::vector<std::unique_ptr<PipelineStage>>& stages) {
  if (!sync.active()) return;
  BATON_CHECK(static_cast<int>(sync.communicators.size()) == schedule.stages,
              "the group's gradient synchronisation has ", sync.communicators.size(), " communicators for ",
              schedule.stages, " stages (one per stage)");
  std::vector<int> all_reduces(static_cast<size_t>(schedule.stages), 0);
  for (const auto& program : schedule.programs) {
    for (const Instruction& ins : program) {
      if (ins.op == Op::all_reduce) ++all_reduces[static_cast<size_t>(ins.stage)];
    }
  }
  for (int s = 0; s < schedule.stages; ++s) {
    BATON_CHECK(sync.communicators[static_cast<size_t>(s)] != nullptr || !stages[static_cast<size_t>(s)], "stage ", s,
                " has no communicator");
    BATON_CHECK(all_reduces[static_cast<size_t>(s)] == 1, "the schedule has ", all_reduces[static_cast<size_t>(s)],
                " all_reduce instructions for stage ", s,
                " where a group of a hybrid needs one (make_schedule with all_reduce = true)");
  }
}

}  // namespace

PipelineExecutor::PipelineExecutor(const Graph& graph, Plan plan, Schedule schedule, std::vector<Device> devices,
                                   PipelineOptions options)
    : graph_(graph), plan_(std::move(plan)), schedule_(std::move(schedule)), options_(std::move(options)) {
  stage_consumers_ = check_plan_and_schedule(graph_, plan_, schedule_, options_);
  units_ = replica_units(plan_);
  if (replicated()) {
    build_replicated(std::move(devices));
    return;
  }
  stage_positions_ = positions_of_stages(schedule_);
  check_processes(options_.processes.get(), schedule_, stage_positions_);
  stages_ = make_stages(graph_, plan_, devices, options_, stage_positions_);
  routing_ = std::make_unique<const PipelineRouting>(graph_, stage_ends(graph_, plan_, stages_), stage_consumers_);
  if (options_.processes) links_ = make_pipeline_links(*options_.processes, *routing_, stage_positions_, stages_);
  sync_ = options_.group_sync;
  build_syncs_and_optimizers();
}

void PipelineExecutor::build_replicated(std::vector<Device> devices) {
  // Every replica a unit: stage-level routing expanded over the units, one program per unit.
  const Plan units_plan = unit_plan(plan_, units_);
  std::vector<bool> recompute;
  for (const int s : units_.stage) {
    recompute.push_back(!options_.recompute.empty() && options_.recompute.at(static_cast<size_t>(s)));
  }
  sync_ = replica_sync(units_, devices, options_.group_sync);  // before the stages: the bucket layout
  PipelineOptions unit_options = options_;
  unit_options.recompute = recompute;
  unit_options.group_sync = sync_;
  schedule_ = unit_schedule(schedule_, units_);
  stage_positions_ = positions_of_stages(schedule_);
  stages_ = make_stages(graph_, units_plan, devices, unit_options, stage_positions_);
  const std::vector<std::unique_ptr<PipelineStage>> none(static_cast<size_t>(plan_.num_stages()));
  const PipelineRouting by_stage(graph_, stage_ends(graph_, plan_, none), stage_consumers_);
  routing_ = std::make_unique<const PipelineRouting>(by_stage.over_units(units_.stage, devices));
  build_syncs_and_optimizers();
}

void PipelineExecutor::build_syncs_and_optimizers() {
  check_group_sync(sync_, schedule_, stages_);
  if (sync_.active() && sync_.strategy == GradSyncStrategy::bucket) {
    for (auto& stage : stages_)
      buckets_.push_back(stage ? std::make_unique<GradientBuckets>(stage->params()) : nullptr);
  }
  if (options_.optimizer.is_null()) return;
  for (auto& stage : stages_) {
    optimizers_.push_back(stage ? make_optimizer(options_.optimizer, stage->params(), stage->context(),
                                                 "pipeline stage " + std::to_string(stage->index()) + " optimizer")
                                : nullptr);
  }
}

PipelineStage& PipelineExecutor::stage(int s) {
  const std::unique_ptr<PipelineStage>& stage = stages_.at(static_cast<size_t>(s));
  BATON_CHECK(stage != nullptr, "pipeline stage ", s, " runs in another process (pipeline position ", position_of(s),
              ")");
  return *stage;
}

PipelineExecutor::~PipelineExecutor() = default;

void PipelineExecutor::initialize(uint64_t seed) {
  Context host(Device::cpu());
  ParamStore whole(graph_, graph_.topological_order(), options_.dtype, host);
  whole.initialize(host, seed);
  load_parameters(whole);
}

void PipelineExecutor::load_parameters(const ParamStore& whole) {
  for (auto& stage : stages_) {
    if (stage) stage->load_from(whole);
  }
  synchronize();
}

void PipelineExecutor::store_parameters(ParamStore& whole, Context& ctx) {
  synchronize();
  for (int u = 0; u < num_stages(); ++u) {
    const auto& stage = stages_[static_cast<size_t>(u)];
    if (stage && first_replica(u)) copy_by_name(stage->params(), whole, stage->params(), ctx);
  }
  ctx.synchronize();
}

void PipelineExecutor::synchronize() {
  for (auto& stage : stages_) {
    if (stage) stage->context().synchronize();
  }
}

void PipelineExecutor::order_inputs(const std::vector<Tensor>& inputs, const Stream& written_on) {
  bool host_reader = false;  // a CPU stage copies CUDA inputs on a stream of its own
  for (auto& stage : stages_) host_reader = host_reader || (stage && stage->device().is_cpu());
  if (written_on.device().is_cpu() || host_reader) return written_on.synchronize();
  if (!inputs_ready_ || inputs_ready_->device() != written_on.device()) {
    inputs_ready_.emplace(written_on.device(), /*timing=*/false);
  }
  inputs_ready_->record(written_on);
  for (auto& stage : stages_) {
    if (!stage) continue;
    const Stream& stream = stage->context().stream();
    if (stream == written_on) continue;
    stream.wait(*inputs_ready_);
    for (const Tensor& t : inputs) t.record_stream(stream);
  }
}

PendingLoss PipelineExecutor::start_step(const std::vector<Tensor>& inputs, const StepOptions& options) {
  MicroBatches batches = split_batch(graph_, inputs, schedule_.micro_batches, "step");
  if (options.inputs_stream) order_inputs(inputs, *options.inputs_stream);
  for (auto& stage : stages_) {
    if (stage) stage->start_training_step();
  }
  StepRecorder* recorder = nullptr;
  if (options.record_trace) {
    recorder = &this->recorder();
    std::vector<Stream> streams;
    for (auto& stage : stages_) {
      if (stage) streams.push_back(stage->context().stream());
    }
    recorder->begin_step(streams);
  }
  PipelineRun run(parts(), std::move(batches),
                  {.mode = Mode::train, .seed = options.seed, .lr = options.lr, .recorder = recorder});
  run.execute(schedule_);
  PendingLoss loss = !options_.processes
                         ? run.mean_loss(losses_)
                         : share_loss(local(routing_->loss_stage()) ? run.mean_loss(losses_) : PendingLoss());
  if (recorder != nullptr) {
    synchronize();  // the trace's events are read now
    recorder->end_step();
  }
  return loss;
}

PendingLoss PipelineExecutor::share_loss(PendingLoss loss) {
  const Stream host = Stream::create(Device::cpu());
  Tensor value = Tensor::empty_host({1}, DType::f64);
  value.data<double>()[0] = loss.valid() ? loss.value() : 0.0;
  options_.processes->broadcast(value, position_of(routing_->loss_stage()), host)->wait();
  return PendingLoss(value.data<double>()[0]);
}

double PipelineExecutor::step(const std::vector<Tensor>& inputs, const StepOptions& options) {
  PendingLoss loss = start_step(inputs, options);
  synchronize();
  return loss.value();
}

PipelineOutputs PipelineExecutor::evaluate(const std::vector<Tensor>& inputs) {
  MicroBatches batches = split_batch(graph_, inputs, micro_batches_for(inputs, schedule_.micro_batches), "evaluate");
  const Schedule forward = replicated()
                               ? unit_forward_schedule(schedule_.kind, batches.count(), stage_consumers_, units_)
                               : make_forward_schedule(schedule_.kind, schedule_.devices, schedule_.chunks(),
                                                       batches.count(), routing_->consumers());
  if (!replicated()) validate_schedule(forward, routing_->consumers());
  PipelineRun run(parts(), std::move(batches), {.mode = Mode::eval});
  run.execute(forward);
  raise_deferred_errors();
  return run.take_outputs();
}

void PipelineExecutor::raise_deferred_errors() {
  synchronize();
  for (auto& stage : stages_) {
    if (stage) kernels::raise_deferred_errors(stage->context());
  }
}

}  // namespace baton::parallel
