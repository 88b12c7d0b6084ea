// The exact min-max dynamic programme shared by the block and antichain partitioners: over a chain of
// nested cut states, choose the stages (and, with free replication, each stage's replicas) that
// minimise the slowest stage's stage_time_ms within the memory cap.
#pragma once

#include <string>

#include "parallel/plan/antichain.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/plan.h"

namespace baton::parallel {

// Solves `request` with stages taken as differences of nested `states` and returns the plan (devices
// assigned, validated), its `partitioner` field set to `partitioner`. Without free replication: exactly
// request.stages stages of request.replicas replicas each; with it: at most request.stages stages and
// request.devices devices. When no split meets the memory cap, the error gives the smallest peak
// memory any split reaches and the cap.
Plan partition_over_cut_states(const PartitionRequest& request, const CutStates& states,
                               const std::string& partitioner);

}  // namespace baton::parallel
