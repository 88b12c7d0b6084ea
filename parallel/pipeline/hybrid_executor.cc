// HybridExecutor: the groups' pipelines, their per-stage communicators, and a step split over them.
#include "parallel/pipeline/hybrid_executor.h"

#include <string>

#include "parallel/comm/agreement.h"
#include "parallel/pipeline/micro_batches.h"
#include "parallel/replicas/replica_set.h"
#include "runtime/core/error.h"
#include "runtime/data/batch.h"

namespace baton::parallel {
namespace {

// What every process of the hybrid across processes must agree on: the layout, the schedule, each
// stage's nodes and the model's parameters (name, dtype, shape).
std::vector<std::string> pipeline_fingerprint(const Graph& graph, const Plan& plan, const Schedule& schedule,
                                              DType dtype) {
  std::string replicas;
  for (const Stage& stage : plan.stages) {
    if (!replicas.empty()) replicas.push_back('-');
    replicas.append(std::to_string(stage.replicas));
  }
  std::vector<std::string> lines = {"stages " + std::to_string(plan.num_stages()) + ", replicas " + replicas +
                                        ", batch " + std::to_string(plan.batch),
                                    "schedule " + std::string(schedule_kind_name(schedule.kind)) + ", " +
                                        std::to_string(schedule.devices) + " positions, " +
                                        std::to_string(schedule.micro_batches) + " micro-batches"};
  for (int s = 0; s < plan.num_stages(); ++s) {
    std::string nodes;
    for (int n : plan.stages[static_cast<size_t>(s)].nodes) {
      if (!nodes.empty()) nodes.push_back(',');
      nodes.append(std::to_string(n));
    }
    lines.push_back("stage " + std::to_string(s) + " nodes " + nodes);
  }
  for (std::string& line : parameter_fingerprint(ParamStore::describe(graph, graph.topological_order(), dtype), dtype))
    lines.push_back(std::move(line));
  return lines;
}

// Model averaging averages each stage's replicas across equal groups; a pipeline of units has none.
void check_no_averaging_with_units(const Plan& plan, const HybridOptions& options) {
  BATON_CHECK(!options.averaging.active() || !unequal_replication(plan), "model averaging (",
              averaging_name(options.averaging.kind),
              ") needs G equal groups (--groups G, G >= 2); a plan with unequal stage replication sums each stage's "
              "replicas' gradients instead");
}

}  // namespace

HybridExecutor::HybridExecutor(const Graph& graph, const Plan& plan, const Schedule& schedule,
                               std::vector<std::vector<Device>> devices, HybridOptions options) {
  check_no_averaging_with_units(plan, options);
  if (unequal_replication(plan)) {
    // One pipeline whose stages have replicas of their own (PipelineExecutor's units).
    BATON_CHECK(devices.size() == 1, "hybrid: a plan with unequal replication runs as one pipeline: ", devices.size(),
                " device lists given (one, with a device per stage replica)");
    groups_count_ = 1;
    PipelineOptions po = options.pipeline;
    po.group_sync = {
        .strategy = options.grad_sync, .communicators = {}, .buckets = options.buckets, .options = options.sync};
    try {
      groups_.push_back(std::make_unique<PipelineExecutor>(graph, plan, schedule, std::move(devices.front()), po));
    } catch (Error& e) {
      e.add_context("in the pipeline with replicated stages");
      throw;
    }
    return;
  }
  groups_count_ = plan_groups(plan);
  BATON_CHECK(static_cast<int>(devices.size()) == groups_count_, "hybrid: ", devices.size(), " device lists for ",
              groups_count_, " groups (one list per group)");
  std::vector<std::vector<std::shared_ptr<comm::Communicator>>> by_group(static_cast<size_t>(groups_count_));
  if (groups_count_ > 1) make_stage_communicators(devices, options.pipeline.comm_backend, by_group);
  for (int g = 0; g < groups_count_; ++g) {
    add_group(graph, plan, schedule, g, std::move(devices[static_cast<size_t>(g)]), options,
              std::move(by_group[static_cast<size_t>(g)]), nullptr);
  }
  start_averaging(options.averaging);
}

HybridExecutor::HybridExecutor(const Graph& graph, const Plan& plan, const Schedule& schedule,
                               comm::Communicator& world, Device device, HybridOptions options) {
  check_no_averaging_with_units(plan, options);
  if (unequal_replication(plan)) {
    // One pipeline of units (stage replicas), a process each: PipelineExecutor's units.
    int units = 0;
    for (const Stage& stage : plan.stages) units += stage.replicas;
    BATON_CHECK(world.size() == units, "hybrid across processes: a plan with ", units,
                " stage replicas needs as many processes (one each), not ", world.size());
    comm::check_agreement(world, "the pipeline's plan and model",
                          pipeline_fingerprint(graph, plan, schedule, options.pipeline.dtype));
    groups_count_ = 1;
    local_group_ = 0;
    PipelineOptions po = options.pipeline;
    po.group_sync = {
        .strategy = options.grad_sync, .communicators = {}, .buckets = options.buckets, .options = options.sync};
    po.processes = world.split(0, world.rank());
    try {
      groups_.push_back(std::make_unique<PipelineExecutor>(
          graph, plan, schedule, std::vector<Device>(static_cast<size_t>(units), device), std::move(po)));
    } catch (Error& e) {
      e.add_context("in the pipeline with replicated stages");
      throw;
    }
    return;
  }
  groups_count_ = plan_groups(plan);
  const int positions = schedule.devices;
  BATON_CHECK(world.size() == groups_count_ * positions, "hybrid across processes: ", groups_count_,
              " groups of a pipeline over ", positions, " positions need ", groups_count_ * positions,
              " processes, not ", world.size());
  comm::check_agreement(world, "the hybrid's plan and model",
                        pipeline_fingerprint(graph, plan, schedule, options.pipeline.dtype));
  local_group_ = world.rank() / positions;
  const int position = world.rank() % positions;
  std::shared_ptr<comm::Communicator> pipeline = world.split(local_group_, position);
  std::shared_ptr<comm::Communicator> gradients;  // across the groups, on the stages' device
  if (groups_count_ > 1) {
    ProcessReplica across = make_process_replica(world, position, local_group_, device, options.pipeline.comm_backend);
    across_ = std::move(across.host);
    gradients = std::move(across.tensors);
  }
  // The stages of this position synchronise over `gradients` (one after the other, in the schedule's
  // order, the same in every group); the others' are other processes' business.
  std::vector<std::shared_ptr<comm::Communicator>> stage_comms;
  if (gradients) stage_comms.assign(static_cast<size_t>(plan.num_stages()), gradients);
  add_group(graph, plan, schedule, local_group_, std::vector<Device>(static_cast<size_t>(plan.num_stages()), device),
            options, std::move(stage_comms), std::move(pipeline));
  start_averaging(options.averaging);
}

void HybridExecutor::make_stage_communicators(const std::vector<std::vector<Device>>& devices,
                                              comm::CommBackend backend,
                                              std::vector<std::vector<std::shared_ptr<comm::Communicator>>>& by_group) {
  // Stage s's replicas: group g's device of that stage.
  const auto stages = devices.front().size();
  std::vector<std::vector<Device>> stage_devices(stages);
  for (int g = 0; g < groups_count_; ++g) {
    BATON_CHECK(devices[static_cast<size_t>(g)].size() == stages, "hybrid: group ", g, " has ",
                devices[static_cast<size_t>(g)].size(), " devices for ", stages, " stages");
    for (size_t s = 0; s < stages; ++s) stage_devices[s].push_back(devices[static_cast<size_t>(g)][s]);
  }
  std::vector<std::vector<std::unique_ptr<comm::Communicator>>> comms = make_replica_communicators(
      stage_devices, backend, [](size_t s) { return "hybrid stage " + std::to_string(s) + "'s replicas"; });
  for (size_t s = 0; s < stages; ++s) {
    for (int g = 0; g < groups_count_; ++g) {
      std::shared_ptr<comm::Communicator> shared = std::move(comms[s][static_cast<size_t>(g)]);
      communicators_.push_back(shared);
      by_group[static_cast<size_t>(g)].push_back(std::move(shared));
    }
  }
}

void HybridExecutor::add_group(const Graph& graph, const Plan& plan, const Schedule& schedule, int g,
                               std::vector<Device> devices, const HybridOptions& options,
                               std::vector<std::shared_ptr<comm::Communicator>> stage_comms,
                               std::shared_ptr<comm::Communicator> processes) {
  stage_comms_.push_back(stage_comms);
  PipelineOptions po = options.pipeline;
  po.group_sync = {.strategy = options.grad_sync,
                   .communicators = std::move(stage_comms),
                   .buckets = options.buckets,
                   .options = options.sync};
  po.processes = std::move(processes);
  try {
    BATON_CHECK(schedule.micro_batches == plan.micro_batches && schedule.replicas_of(0) == groups_count_,
                "hybrid: the schedule has ", schedule.micro_batches, " micro-batches and ", schedule.replicas_of(0),
                " replica(s) of stage 0; the plan's step has ", plan.micro_batches, " and ", groups_count_,
                " (make it with plan_schedule)");
    groups_.push_back(std::make_unique<PipelineExecutor>(graph, group_plan(plan, g), group_schedule(schedule, g),
                                                         std::move(devices), std::move(po)));
  } catch (Error& e) {
    e.add_context("in hybrid group " + std::to_string(g));
    throw;
  }
}

PipelineExecutor& HybridExecutor::group(int g) {
  if (local_group_ < 0) return *groups_.at(static_cast<size_t>(g));
  BATON_CHECK(g == local_group_, "hybrid group ", g, " runs in other processes (this one runs group ", local_group_,
              ")");
  return *groups_.front();
}

HybridExecutor::~HybridExecutor() = default;

void HybridExecutor::initialize(uint64_t seed) {
  for (auto& group : groups_) group->initialize(seed);
  restart_averaging();
}

void HybridExecutor::load_parameters(const ParamStore& whole) {
  for (auto& group : groups_) group->load_parameters(whole);
  restart_averaging();
}

void HybridExecutor::store_parameters(ParamStore& whole, Context& ctx) {
  groups_.front()->store_parameters(whole, ctx);
}

}  // namespace baton::parallel
