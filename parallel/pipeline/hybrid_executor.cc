// HybridExecutor: the groups' pipelines, their per-stage communicators, and a step split over them.
#include "parallel/pipeline/hybrid_executor.h"

#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "parallel/comm/inproc_communicator.h"
#include "parallel/comm/nccl_communicator.h"
#include "parallel/pipeline/micro_batches.h"
#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

// One communicator per group for stage s: an in-process group on CPU devices, NCCL on GPUs.
std::vector<std::unique_ptr<comm::Communicator>> stage_communicators(const std::vector<Device>& devices, int stage) {
  for (const Device& d : devices) {
    BATON_CHECK(d.is_cuda() == devices.front().is_cuda(), "hybrid: stage ", stage, " has replicas on ",
                devices.front().str(), " and ", d.str(),
                ": every replica of a stage on a CPU device, or every one on a GPU");
  }
  if (devices.front().is_cuda()) return comm::make_nccl_communicators(devices);
  return comm::make_inproc_communicators(static_cast<int>(devices.size()));
}

}  // namespace

int plan_groups(const Plan& plan) {
  BATON_CHECK(!plan.stages.empty(), "hybrid: the plan has no stages");
  const int groups = plan.stages.front().replicas;
  for (int s = 0; s < plan.num_stages(); ++s) {
    const int replicas = plan.stages[static_cast<size_t>(s)].replicas;
    BATON_CHECK(replicas == groups, "hybrid: stage ", s, " has ", replicas, " replicas where stage 0 has ", groups,
                ": only plans replicating every stage equally (G groups of the whole pipeline) run; a plan with "
                "unequal replication per stage (PipeDream's 4-2-1 style) is refused (docs/hybrid.md)");
  }
  BATON_CHECK(groups >= 1, "hybrid: stages need at least one replica, not ", groups);
  BATON_CHECK(plan.batch % groups == 0, "hybrid: the batch of ", plan.batch, " does not split over ", groups,
              " groups");
  return groups;
}

Plan group_plan(const Plan& plan, int group) {
  const int groups = plan_groups(plan);
  BATON_CHECK(group >= 0 && group < groups, "hybrid: group ", group, " of ", groups);
  Plan out = plan;
  out.batch = plan.batch / groups;
  for (Stage& stage : out.stages) {
    const int device = stage.devices.empty() ? 0 : stage.devices.at(static_cast<size_t>(group));
    stage.replicas = 1;
    stage.devices = {device};
  }
  return out;
}

HybridExecutor::HybridExecutor(const Graph& graph, const Plan& plan, const Schedule& schedule,
                               std::vector<std::vector<Device>> devices, HybridOptions options) {
  const int groups = plan_groups(plan);
  const int stages = plan.num_stages();
  BATON_CHECK(static_cast<int>(devices.size()) == groups, "hybrid: ", devices.size(), " device lists for ", groups,
              " groups (one list per group)");
  // Stage s's communicators, one per group, are created eagerly, in stage order.
  std::vector<std::vector<std::shared_ptr<comm::Communicator>>> by_group(static_cast<size_t>(groups));
  if (groups > 1) {
    for (int s = 0; s < stages; ++s) {
      std::vector<Device> replicas;
      for (int g = 0; g < groups; ++g) {
        BATON_CHECK(static_cast<int>(devices[static_cast<size_t>(g)].size()) == stages, "hybrid: group ", g, " has ",
                    devices[static_cast<size_t>(g)].size(), " devices for ", stages, " stages");
        replicas.push_back(devices[static_cast<size_t>(g)][static_cast<size_t>(s)]);
      }
      std::vector<std::unique_ptr<comm::Communicator>> comms = stage_communicators(replicas, s);
      for (int g = 0; g < groups; ++g) {
        std::shared_ptr<comm::Communicator> shared = std::move(comms[static_cast<size_t>(g)]);
        communicators_.push_back(shared);
        by_group[static_cast<size_t>(g)].push_back(std::move(shared));
      }
    }
  }
  for (int g = 0; g < groups; ++g) {
    PipelineOptions po = options.pipeline;
    po.group_sync = {.strategy = options.grad_sync,
                     .communicators = std::move(by_group[static_cast<size_t>(g)]),
                     .buckets = options.buckets,
                     .options = options.sync};
    try {
      groups_.push_back(std::make_unique<PipelineExecutor>(graph, group_plan(plan, g), schedule,
                                                           std::move(devices[static_cast<size_t>(g)]), std::move(po)));
    } catch (Error& e) {
      e.add_context("in hybrid group " + std::to_string(g));
      throw;
    }
  }
}

HybridExecutor::~HybridExecutor() = default;

void HybridExecutor::on_groups(const std::function<void(int)>& fn) {
  // The first failure in time is the cause: the other groups fail later, waiting in an all-reduce
  // for the group that stopped until their communicator's timeout.
  std::mutex mutex;
  std::exception_ptr first;
  int first_group = -1;
  const auto run = [&](int g) {
    try {
      fn(g);
    } catch (...) {
      {
        std::lock_guard lock(mutex);
        if (first) return;
        first = std::current_exception();
        first_group = g;
      }
      // The other groups would wait for this one in their next all-reduce until the timeout.
      const std::string reason = "hybrid group " + std::to_string(g) + " failed";
      for (const auto& communicator : communicators_) communicator->abort_in_process(reason);
    }
  };
  {
    std::vector<std::jthread> threads;
    for (int g = 1; g < groups(); ++g) threads.emplace_back(run, g);
    run(0);
  }  // joins
  if (!first) return;
  try {
    std::rethrow_exception(first);
  } catch (Error& e) {
    if (groups() > 1) e.add_context("in hybrid group " + std::to_string(first_group));
    throw;
  }
}

void HybridExecutor::initialize(uint64_t seed) {
  for (auto& group : groups_) group->initialize(seed);
}

void HybridExecutor::load_parameters(const ParamStore& whole) {
  for (auto& group : groups_) group->load_parameters(whole);
}

void HybridExecutor::store_parameters(ParamStore& whole, Context& ctx) {
  groups_.front()->store_parameters(whole, ctx);
}

PendingLoss HybridExecutor::start_step(const std::vector<Tensor>& inputs, const StepOptions& options) {
  const int groups = this->groups();
  const int micro_batches = groups_.front()->schedule().micro_batches;
  std::vector<std::vector<Tensor>> shares(static_cast<size_t>(groups));
  for (const Tensor& input : inputs) {
    BATON_CHECK(input.rank() >= 1 && input.size(0) % groups == 0, "hybrid step: a batch of ",
                input.rank() >= 1 ? input.size(0) : 0, " rows does not split evenly over ", groups, " groups");
    const std::vector<Tensor> parts = input.split(groups);
    for (int g = 0; g < groups; ++g) shares[static_cast<size_t>(g)].push_back(parts[static_cast<size_t>(g)]);
  }
  std::vector<PendingLoss> losses(static_cast<size_t>(groups));
  on_groups([&](int g) {
    StepOptions mine = options;
    // micro_batch_seed(micro_batch_seed(s, g M), m) == micro_batch_seed(s, g M + m).
    mine.seed = micro_batch_seed(options.seed, g * micro_batches);
    losses[static_cast<size_t>(g)] = groups_[static_cast<size_t>(g)]->start_step(shares[static_cast<size_t>(g)], mine);
  });
  PendingLoss loss = std::move(losses.front());
  losses.erase(losses.begin());
  loss.average_with(std::move(losses));
  return loss;
}

double HybridExecutor::step(const std::vector<Tensor>& inputs, const StepOptions& options) {
  PendingLoss loss = start_step(inputs, options);
  for (auto& group : groups_) {
    for (int s = 0; s < group->num_stages(); ++s) group->stage(s).context().synchronize();
  }
  return loss.value();
}

}  // namespace baton::parallel
