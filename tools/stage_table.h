// The stage table of a plan (one row per stage: nodes, forward/backward ms, parameter, boundary and
// memory sizes, replicas, devices), printed by `baton plan` and `baton train --stages`.
#pragma once

#include <string>
#include <vector>

#include "parallel/plan/planner.h"

namespace baton::cli {

// `device_names`: one per stage, printed instead of the plan's cluster device ids when given.
void print_stage_table(const parallel::EvaluatedPlan& e, const parallel::Profile& p,
                       const std::vector<std::string>& device_names = {});

}  // namespace baton::cli
