// The hybrid's plan: its groups (every stage replicated equally) and each group's share of it.
#include "parallel/pipeline/hybrid_executor.h"
#include "runtime/core/error.h"

namespace baton::parallel {

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
  BATON_CHECK(plan.micro_batches % groups == 0, "hybrid: the step's ", plan.micro_batches,
              " micro-batches do not split over ", groups, " groups (each group takes whole micro-batches)");
  return groups;
}

Plan group_plan(const Plan& plan, int group) {
  const int groups = plan_groups(plan);
  BATON_CHECK(group >= 0 && group < groups, "hybrid: group ", group, " of ", groups);
  Plan out = plan;
  out.batch = plan.batch / groups;
  out.micro_batches = plan.micro_batches / groups;
  for (Stage& stage : out.stages) {
    const int device = stage.devices.empty() ? 0 : stage.devices.at(static_cast<size_t>(group));
    stage.replicas = 1;
    stage.devices = {device};
  }
  return out;
}

}  // namespace baton::parallel
