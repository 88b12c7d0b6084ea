// A run as a pipeline (or the hybrid), in this process or as one process of several: the plan and
// its stage table reported, the Trainer run over the pipeline engine, the predicted and measured step
// times side by side and both timelines written to parallel.trace (see parallel_training_run.h).
#include <algorithm>
#include <thread>

#include "parallel/comm/launch_environment.h"
#include "parallel/comm/mpi_runtime.h"
#include "parallel/parallel_training.h"
#include "parallel/parallel_training_run.h"
#include "parallel/plan/trace.h"
#include "runtime/core/cpu_threads.h"

namespace baton::parallel {
namespace {

// Across processes: each process writes its own measured lanes (and rank 0 the predicted step) to
// the --trace path with its rank ("t.json" -> "t.rank3.json").
void write_process_trace(PipelineTrainEngine& engine, const EvaluatedPlan& planned, const ParallelConfig& parallel,
                         int rank, size_t steps, RunReport& report) {
  std::vector<TraceEvent> events = rank == 0 ? planned.predicted.events : std::vector<TraceEvent>{};
  std::vector<TraceLane> lanes = rank == 0 ? planned.predicted.lanes : std::vector<TraceLane>{};
  PipelineExecutor& mine = engine.executor();
  for (TraceEvent& e : mine.take_trace()) events.push_back(std::move(e));
  for (const TraceLane& l : mine.trace_lanes()) lanes.push_back(l);
  const std::string name = "measured rank " + std::to_string(rank) + " (group " +
                           std::to_string(engine.groups().local_group()) + ", stage " +
                           std::to_string(rank % parallel.stages) + ")";
  const std::string path = rank_path(parallel.trace, rank);
  write_chrome_trace(path, chrome_trace_json(events, lanes, {"predicted", name}));
  report.line(
      formatted("wrote %d measured steps of each process to %s (rank 0's with the predicted step; open in Perfetto "
                "or chrome://tracing)",
                std::min<int>(parallel.trace_steps, static_cast<int>(steps)), rank_path(parallel.trace, 0).c_str()));
}

// In one process: the predicted step and each group's measured lanes in a process of their own
// ("measured" for one group, "measured group g").
void write_trace(PipelineTrainEngine& engine, const EvaluatedPlan& planned, const ParallelConfig& parallel,
                 size_t steps, RunReport& report) {
  std::vector<TraceEvent> events = planned.predicted.events;
  std::vector<TraceLane> lanes = planned.predicted.lanes;
  std::vector<std::string> processes = {"predicted"};
  const int groups = engine.groups().groups();
  for (int g = 0; g < groups; ++g) {
    PipelineExecutor& group = engine.groups().group(g);
    for (TraceEvent& e : group.take_trace()) {
      e.process = kMeasuredProcess + g;
      events.push_back(std::move(e));
    }
    for (TraceLane l : group.trace_lanes()) {
      l.process = kMeasuredProcess + g;
      lanes.push_back(std::move(l));
    }
    processes.push_back(groups == 1 ? "measured" : "measured group " + std::to_string(g));
  }
  write_chrome_trace(parallel.trace, chrome_trace_json(events, lanes, processes));
  report.line(formatted("wrote the predicted step and %d measured steps%s to %s (open in Perfetto or chrome://tracing)",
                        std::min<int>(parallel.trace_steps, static_cast<int>(steps)),
                        groups > 1 ? " of every group" : "", parallel.trace.c_str()));
}

// "a,b,c" of `count` names.
std::string joined(int count, const std::function<std::string(int)>& name) {
  std::string all;
  for (int k = 0; k < count; ++k) all.append(k > 0 ? "," : "").append(name(k));
  return all;
}

// The stage table's devices column: every replica's device of a stage (its process under mpirun)
// under unequal replication; else every group's process, or device, of the stage.
std::vector<std::string> stage_device_names(const PipelineSetup& setup, const ParallelConfig& parallel,
                                            bool processes) {
  std::vector<std::string> names;
  if (unequal_replication(setup.planned.plan)) {
    int unit = 0;
    for (const Stage& stage : setup.planned.plan.stages) {
      names.push_back(joined(stage.replicas, [&](int k) {
        const int u = unit + k;
        return processes ? "rank " + std::to_string(u) : setup.stage_devices.at(static_cast<size_t>(u)).str();
      }));
      unit += stage.replicas;
    }
    return names;
  }
  for (size_t s = 0; s < setup.stage_devices.size(); ++s) {
    const int stage = static_cast<int>(s);
    if (processes) {
      names.push_back(
          joined(parallel.groups, [&](int g) { return "rank " + std::to_string(g * parallel.stages + stage); }));
    } else if (!setup.group_devices.empty()) {
      names.push_back(joined(static_cast<int>(setup.group_devices.size()),
                             [&](int g) { return setup.group_devices[static_cast<size_t>(g)][s].str(); }));
    } else {
      names.push_back(setup.stage_devices[s].str());
    }
  }
  return names;
}

// How the run's workers share the machine, talk across processes, and what the groups or the stage
// replicas do with their gradients: the lines after the stage table.
void report_layout(const PipelineSetup& setup, const ParallelConfig& parallel, const TrainConfig& config,
                   const comm::Communicator* world, Device process_device, RunReport& report) {
  const EvaluatedPlan& planned = setup.planned;
  const bool units = unequal_replication(planned.plan);
  const int workers = planned.plan.num_devices();  // stage workers: threads, or processes under mpirun
  const int cores = world ? static_cast<int>(std::thread::hardware_concurrency()) : cpu_cores_available();
  if (setup.available.front().is_cpu() && workers > cores) {
    report.line(formatted(
        "note: %d stage workers share %d cores; the simulator time-slices the cores between them, but the kernel "
        "leaves cores idle that the model fills, so the predicted step runs low (docs/planner.md, "
        "\"Calibration\")",
        workers, cores));
  }
  const bool gpu = process_device.is_cuda();
  if (world && units) {
    report.line(formatted(
        "across processes: %d processes (MPI), world rank u runs stage replica u (stage 0's replicas first) on %s; "
        "activations and gradients between replicas through %s",
        world->size(), gpu ? "the GPU of its local rank" : "its cpu:0", gpu ? "NCCL send/recv" : "MPI send/recv"));
  } else if (world) {
    report.line(
        formatted("across processes: %d x %d processes (MPI), world rank g x %d + s runs stage s of group g on %s; "
                  "activations and gradients between stages through %s",
                  parallel.groups, parallel.stages, parallel.stages, gpu ? "the GPU of its local rank" : "its cpu:0",
                  gpu ? "NCCL send/recv (one communicator per link)" : "MPI send/recv"));
  }
  const char* sync = parallel.grad_sync == GradSyncStrategy::partition
                         ? "one all-reduce after its last backward (partition)"
                         : "buckets during its last backward (bucket)";
  const int group_count = std::max<int>(1, static_cast<int>(setup.group_devices.size()));
  if (!units && (world ? parallel.groups > 1 : group_count > 1)) {
    const int g = world ? parallel.groups : group_count;
    const std::string hybrid = formatted(
        "hybrid: %d groups of this pipeline (group g on the g-th device of each stage above), %lld samples "
        "each per step; ",
        g, static_cast<long long>(config.batch_size / g));
    if (parallel.model_averaging == Averaging::none) {
      report.line(hybrid + formatted("each stage's gradients averaged over the groups by %s", sync));
    } else {
      report.line(hybrid + formatted("model averaging (%s): each stage's replicas meet across the groups every %d "
                                     "steps (%s exchange)",
                                     std::string(averaging_name(parallel.model_averaging)).c_str(),
                                     parallel.average_every,
                                     std::string(exchange_name(parallel.averaging_exchange)).c_str()));
    }
  }
  if (units) {
    report.line(formatted(
        "replicated stages: replica k of a stage with r replicas takes micro-batches k, k + r, ... of the step's "
        "%d; each stage's replicas sum their gradients by %s",
        planned.plan.micro_batches, sync));
  }
}

// One process, or (`world` set) one process of the hybrid across processes.
TrainSummary run_pipelined(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                           const ParallelConfig& parallel, const data::Dataset& train_set,
                           const data::Dataset* test_set, RunReport& report,
                           const std::function<bool()>& stop_requested,
                           const std::shared_ptr<comm::Communicator>& world, Device process_device) {
  const PipelineSetup setup = plan_pipeline(graph, model_name, config, parallel, &report, world.get());
  const EvaluatedPlan& planned = setup.planned;
  const std::string label =
      parallel.plan_file.empty() ? planned.label() : "plan from " + parallel.plan_file + " (" + planned.label() + ")";
  report.line(formatted("pipeline: %s, %s profile on %s, cluster %s, batch %lld (micro-batch %d)", label.c_str(),
                        setup.profile.source.c_str(), setup.profile.device.c_str(), setup.cluster.name().c_str(),
                        static_cast<long long>(config.batch_size), setup.micro_batch));
  report.line(stage_table_text(planned, setup.profile, stage_device_names(setup, parallel, world != nullptr)));
  report_layout(setup, parallel, config, world.get(), process_device, report);

  const std::unique_ptr<PipelineTrainEngine> engine =
      world ? make_pipeline_engine(graph, model_name, config, parallel, setup, world, process_device)
            : make_pipeline_engine(graph, model_name, config, parallel, setup);
  Trainer trainer(graph, config, train_set, test_set, *engine);
  const TrainSummary summary = trainer.run(stop_requested);

  const double measured = engine->measured_step_ms();
  const size_t steps = engine->step_ms().size();
  report.line(
      formatted("step time: predicted %.3f ms, measured %.3f ms (median of %zu steps%s), measured / predicted %.2fx",
                planned.predicted.step_ms, measured, steps > 1 ? steps - 1 : steps, steps > 1 ? " after the first" : "",
                planned.predicted.step_ms > 0 ? measured / planned.predicted.step_ms : 0.0));
  if (engine->groups().averaging()) {
    report.line(averaging_summary(engine->groups().averaging_meetings(), engine->groups().averaging_bytes_sent()));
  }
  if (!parallel.trace.empty() && world) {
    write_process_trace(*engine, planned, parallel, world->rank(), steps, report);
  } else if (!parallel.trace.empty()) {
    write_trace(*engine, planned, parallel, steps, report);
  }
  return summary;
}

}  // namespace

TrainSummary train_pipelined(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                             const ParallelConfig& parallel, const data::Dataset& train_set,
                             const data::Dataset* test_set, RunReport& report,
                             const std::function<bool()>& stop_requested) {
  const comm::LaunchEnvironment launch = comm::launch_environment();
  if (launch.size == 1) {
    return run_pipelined(graph, model_name, config, parallel, train_set, test_set, report, stop_requested, nullptr,
                         Device::cpu());
  }
  // One process per group and stage; an error on any rank ends every rank at once.
  comm::MpiRuntime runtime;
  try {
    check_settings_agree(*runtime.world(), config, parallel, train_set, test_set);
    return run_pipelined(graph, model_name, config, parallel, train_set, test_set, report, stop_requested,
                         runtime.world(), mpi_process_device(config, runtime));
  } catch (const std::exception& e) {
    runtime.abort(std::string("error: ") + e.what());
  }
}

}  // namespace baton::parallel
