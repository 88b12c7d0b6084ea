// Training a plan file as written (`baton train --plan FILE`, ParallelConfig::plan_file): the
// configuration it implies, and the pipeline set-up from it — no profiling, no re-planning.
#pragma once

#include <functional>
#include <string>

#include "parallel/comm/communicator.h"
#include "parallel/parallel_config.h"
#include "parallel/parallel_training.h"
#include "runtime/graph/graph.h"
#include "runtime/train/progress.h"
#include "runtime/train/train_config.h"

namespace baton::parallel {

// `parallel` with the layout of its plan file (unchanged without one): stages (pipeline positions;
// with unequal replicas, the stage replicas and replication "free"), groups, micro_batches,
// schedule, partitioner, grad_sync and devices. A field set to something other than its default
// and the plan's is one error naming the flag and the file; so are --data-parallel and, under a
// launcher, a process count other than the plan's stage replicas.
ParallelConfig with_plan_file(const ParallelConfig& parallel);

// plan_pipeline for parallel.plan_file: the file read and checked against `graph`, the batch and the
// devices (a config.device of the other kind is an error); the plan simulated with the profile and
// cluster it was planned with (the predicted step, its timeline when parallel.trace is set). With
// `world` (one process per stage replica) the plan must have a device of its own for each replica
// and as many replicas as processes.
PipelineSetup plan_pipeline_from_file(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                                      const ParallelConfig& parallel, RunReport* report, comm::Communicator* world);

}  // namespace baton::parallel
