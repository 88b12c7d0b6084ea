// PipelineExecutor: checks the plan and schedule, builds the stages, their routing and optimisers
// once; loads and stores parameters; each step and evaluation is one PipelineRun.
#include "parallel/pipeline/pipeline_executor.h"

#include <string>

#include "kernels/deferred_checks.h"
#include "parallel/pipeline/pipeline_build.h"
#include "runtime/train/optimizer.h"

namespace baton::parallel {

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
  if (options_.processes) {
    links_ = make_pipeline_links(*options_.processes, *routing_, stage_positions_, stages_, options_.comm_backend);
  }
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
  schedule_ = unit_schedule(schedule_, units_);
  stage_positions_ = positions_of_stages(schedule_);  // unit u at position u
  comm::Communicator* processes = options_.processes.get();
  check_processes(processes, schedule_, stage_positions_);
  BATON_CHECK(static_cast<int>(devices.size()) == units_.count(), "replicated pipeline: ", devices.size(),
              " devices for ", units_.count(), " stage replicas (one each)");
  // Before the stages: the bucket layout.
  sync_ = processes ? replica_sync_across(units_, *processes, devices.at(static_cast<size_t>(processes->rank())),
                                          options_.group_sync, options_.comm_backend)
                    : replica_sync(units_, devices, options_.group_sync, options_.comm_backend);
  PipelineOptions unit_options = options_;
  unit_options.recompute = recompute;
  unit_options.group_sync = sync_;
  stages_ = make_stages(graph_, units_plan, devices, unit_options, stage_positions_);
  const std::vector<std::unique_ptr<PipelineStage>> none(static_cast<size_t>(plan_.num_stages()));
  const PipelineRouting by_stage(graph_, stage_ends(graph_, plan_, none), stage_consumers_);
  std::vector<std::optional<Device>> local_devices;
  for (size_t u = 0; u < devices.size(); ++u) {
    if (stages_[u])
      local_devices.emplace_back(devices[u]);
    else
      local_devices.emplace_back();
  }
  routing_ = std::make_unique<const PipelineRouting>(by_stage.over_units(units_.stage, local_devices));
  if (processes) links_ = make_pipeline_links(*processes, *routing_, stage_positions_, stages_, options_.comm_backend);
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
