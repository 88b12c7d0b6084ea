// `baton train` through the pipeline executor (see train_pipeline.h).
#include "tools/train_pipeline.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "parallel/comm/launch_environment.h"
#include "parallel/comm/mpi_runtime.h"
#include "parallel/parallel_training.h"
#include "parallel/plan/trace.h"
#include "runtime/core/cpu_threads.h"
#include "tools/rank_output.h"
#include "tools/stage_table.h"

namespace baton::cli {

using namespace baton::parallel;

namespace {

// The end of a model-averaging run, plain data parallel or hybrid: how often the replicas met and the
// bytes the first replica (the hybrid: this process's first group's stages) sent.
void print_averaging_summary(int64_t meetings, int64_t bytes_sent) {
  std::printf("model averaging: the replicas met %lld times; replica 0 sent %.3f MB in the averaging exchange\n",
              static_cast<long long>(meetings), static_cast<double>(bytes_sent) / 1e6);
}

// Across processes: each process writes its own measured lanes (and rank 0 the predicted step) to
// the --trace path with its rank ("t.json" -> "t.rank3.json").
void write_process_trace(PipelineTrainEngine& engine, const EvaluatedPlan& planned, const ParallelConfig& parallel,
                         int rank, size_t steps) {
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
  std::printf(
      "wrote %d measured steps of each process to %s (rank 0's with the predicted step; open in Perfetto "
      "or chrome://tracing)\n",
      std::min<int>(parallel.trace_steps, static_cast<int>(steps)), rank_path(parallel.trace, 0).c_str());
}

// One process, or (`world` set) one process of the hybrid across processes.
TrainSummary run_pipelined(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                           const ParallelConfig& parallel, const data::Dataset& train_set,
                           const data::Dataset* test_set, const std::function<bool()>& stop_requested,
                           const std::shared_ptr<comm::Communicator>& world, Device process_device) {
  const auto progress = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  const PipelineSetup setup = plan_pipeline(graph, model_name, config, parallel, progress, world.get());
  const EvaluatedPlan& planned = setup.planned;
  std::vector<std::string> names;
  const bool units = unequal_replication(planned.plan);
  if (units) {  // every replica's device of the stage (its process under mpirun)
    size_t unit = 0;
    for (const Stage& stage : planned.plan.stages) {
      std::string all;
      for (int k = 0; k < stage.replicas; ++k, ++unit) {
        if (k > 0) all.push_back(',');
        if (world) all.append("rank ");
        all.append(world ? std::to_string(unit) : setup.stage_devices.at(unit).str());
      }
      names.push_back(all);
    }
  } else {
    for (const Device& d : setup.stage_devices) names.push_back(d.str());
  }
  for (size_t s = 0; s < names.size() && world && !units; ++s) {  // every group's process of the stage
    std::string all;
    for (int g = 0; g < parallel.groups; ++g) {
      if (g > 0) all.push_back(',');
      all.append("rank ").append(std::to_string(g * parallel.stages + static_cast<int>(s)));
    }
    names[s] = all;
  }
  for (size_t s = 0; s < names.size() && !world && !setup.group_devices.empty();
       ++s) {  // every group's replica of the stage
    std::string all;
    for (const auto& group : setup.group_devices) {
      if (!all.empty()) all.push_back(',');
      all.append(group[s].str());
    }
    names[s] = all;
  }
  const std::string label =
      parallel.plan_file.empty() ? planned.label() : "plan from " + parallel.plan_file + " (" + planned.label() + ")";
  std::printf("pipeline: %s, %s profile on %s, cluster %s, batch %lld (micro-batch %d)\n", label.c_str(),
              setup.profile.source.c_str(), setup.profile.device.c_str(), setup.cluster.name().c_str(),
              static_cast<long long>(config.batch_size), setup.micro_batch);
  print_stage_table(planned, setup.profile, names);
  const int workers = planned.plan.num_devices();  // stage workers: threads, or processes under mpirun
  const int cores = world ? static_cast<int>(std::thread::hardware_concurrency()) : cpu_cores_available();
  if (setup.available.front().is_cpu() && workers > cores) {
    std::printf(
        "note: %d stage workers share %d cores; the simulator time-slices the cores between them, but the kernel "
        "leaves cores idle that the model fills, so the predicted step runs low (docs/planner.md, "
        "\"Calibration\")\n",
        workers, cores);
  }
  if (world && units) {
    const bool gpu = process_device.is_cuda();
    std::printf(
        "across processes: %d processes (MPI), world rank u runs stage replica u (stage 0's replicas first) on %s; "
        "activations and gradients between replicas through %s\n",
        world->size(), gpu ? "the GPU of its local rank" : "its cpu:0", gpu ? "NCCL send/recv" : "MPI send/recv");
  } else if (world) {
    const bool gpu = process_device.is_cuda();
    std::printf(
        "across processes: %d x %d processes (MPI), world rank g x %d + s runs stage s of group g on %s; "
        "activations and gradients between stages through %s\n",
        parallel.groups, parallel.stages, parallel.stages, gpu ? "the GPU of its local rank" : "its cpu:0",
        gpu ? "NCCL send/recv (one communicator per link)" : "MPI send/recv");
  }
  const char* sync = parallel.grad_sync == GradSyncStrategy::partition
                         ? "one all-reduce after its last backward (partition)"
                         : "buckets during its last backward (bucket)";
  const int group_count = std::max<int>(1, static_cast<int>(setup.group_devices.size()));
  if (!units && (world ? parallel.groups > 1 : group_count > 1)) {
    const int g = world ? parallel.groups : group_count;
    std::printf(
        "hybrid: %d groups of this pipeline (group g on the g-th device of each stage above), %lld samples "
        "each per step; ",
        g, static_cast<long long>(config.batch_size / g));
    if (parallel.model_averaging == Averaging::none) {
      std::printf("each stage's gradients averaged over the groups by %s\n", sync);
    } else {
      std::printf("model averaging (%s): each stage's replicas meet across the groups every %d steps (%s exchange)\n",
                  std::string(averaging_name(parallel.model_averaging)).c_str(), parallel.average_every,
                  std::string(exchange_name(parallel.averaging_exchange)).c_str());
    }
  }
  if (units) {
    std::printf(
        "replicated stages: replica k of a stage with r replicas takes micro-batches k, k + r, ... of the step's "
        "%d; each stage's replicas sum their gradients by %s\n",
        planned.plan.micro_batches, sync);
  }
  std::fflush(stdout);

  const std::unique_ptr<PipelineTrainEngine> engine =
      world ? make_pipeline_engine(graph, model_name, config, parallel, setup, world, process_device)
            : make_pipeline_engine(graph, model_name, config, parallel, setup);
  Trainer trainer(graph, config, train_set, test_set, *engine);
  const TrainSummary summary = trainer.run(stop_requested);

  const double measured = engine->measured_step_ms();
  const size_t steps = engine->step_ms().size();
  std::printf("step time: predicted %.3f ms, measured %.3f ms (median of %zu steps%s), measured / predicted %.2fx\n",
              planned.predicted.step_ms, measured, steps > 1 ? steps - 1 : steps, steps > 1 ? " after the first" : "",
              planned.predicted.step_ms > 0 ? measured / planned.predicted.step_ms : 0.0);
  if (engine->groups().averaging()) {
    print_averaging_summary(engine->groups().averaging_meetings(), engine->groups().averaging_bytes_sent());
  }
  if (!parallel.trace.empty() && world) {
    write_process_trace(*engine, planned, parallel, world->rank(), steps);
  } else if (!parallel.trace.empty()) {
    std::vector<TraceEvent> events = planned.predicted.events;
    std::vector<TraceLane> lanes = planned.predicted.lanes;
    // Each group's lanes in a process of their own: "measured" (one group), "measured group g".
    std::vector<std::string> processes = {"predicted"};
    const int groups = engine->groups().groups();
    for (int g = 0; g < groups; ++g) {
      PipelineExecutor& group = engine->groups().group(g);
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
    std::printf("wrote the predicted step and %d measured steps%s to %s (open in Perfetto or chrome://tracing)\n",
                std::min<int>(parallel.trace_steps, static_cast<int>(steps)),
                engine->groups().groups() > 1 ? " of every group" : "", parallel.trace.c_str());
  }
  return summary;
}

}  // namespace

TrainSummary train_pipelined(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                             const ParallelConfig& parallel, const data::Dataset& train_set,
                             const data::Dataset* test_set, const std::function<bool()>& stop_requested) {
  const comm::LaunchEnvironment launch = comm::launch_environment();
  if (launch.size == 1) {
    return run_pipelined(graph, model_name, config, parallel, train_set, test_set, stop_requested, nullptr,
                         Device::cpu());
  }
  // One process per group and stage; an error on any rank ends every rank at once.
  comm::MpiRuntime runtime;
  try {
    return run_pipelined(graph, model_name, config, parallel, train_set, test_set, stop_requested, runtime.world(),
                         mpi_process_device(config, runtime));
  } catch (const std::exception& e) {
    runtime.abort(std::string("error: ") + e.what());
  }
}

namespace {

TrainSummary train_replicas(DataParallelEngine& engine, const Graph& graph, const TrainConfig& config,
                            const ParallelConfig& parallel, const data::Dataset& train_set,
                            const data::Dataset* test_set, const std::function<bool()>& stop_requested,
                            const std::string& where) {
  const auto& buckets = engine.bucket_plan().buckets;
  const long long share = config.batch_size / engine.replicas();
  if (parallel.model_averaging == Averaging::none) {
    std::printf(
        "data parallel: %d replicas %s, %lld samples each per step; %zu gradient bucket%s, all-reduced "
        "(mean) during backward\n",
        engine.replicas(), where.c_str(), share, buckets.size(), buckets.size() == 1 ? "" : "s");
  } else {
    const std::string first =
        parallel.model_averaging == Averaging::post_local
            ? "gradients all-reduced for the first " + std::to_string(parallel.local_after) + " steps, then "
            : "";
    std::printf(
        "data parallel: %d replicas %s, %lld samples each per step; model averaging (%s): %seach replica steps on "
        "its own gradients, %s every %d steps (%s exchange)\n",
        engine.replicas(), where.c_str(), share, std::string(averaging_name(parallel.model_averaging)).c_str(),
        first.c_str(),
        parallel.model_averaging == Averaging::bmuf    ? "block momentum update"
        : parallel.model_averaging == Averaging::easgd ? "elastic move towards the centre"
                                                       : "parameters averaged",
        parallel.average_every, std::string(exchange_name(parallel.averaging_exchange)).c_str());
  }
  std::fflush(stdout);
  if (!parallel.trace.empty()) engine.set_trace_steps(parallel.trace_steps);
  Trainer trainer(graph, config, train_set, test_set, engine);
  const TrainSummary summary = trainer.run(stop_requested);
  if (summary.steps > 0 && parallel.model_averaging == Averaging::none) {
    std::printf("communication: %.0f%% of the last step's all-reduce time ran during backward (replica 0)\n",
                100 * hidden_communication_fraction(engine.last_step(0)));
  } else if (parallel.model_averaging != Averaging::none) {
    print_averaging_summary(engine.averaging_meetings(), engine.averaging_bytes_sent(0));
  }
  if (!parallel.trace.empty()) {
    // Several processes: each writes its replicas' lanes to a file of its own ("t.json" -> "t.rank1.json").
    const std::string path = engine.local_replicas() < engine.replicas()
                                 ? rank_path(parallel.trace, engine.data_shard().index)
                                 : parallel.trace;
    write_chrome_trace(path, chrome_trace_json(engine.take_trace(), engine.trace_lanes(), {"predicted", "measured"}));
    std::printf("wrote %d measured steps of every replica to %s (open in Perfetto or chrome://tracing)\n",
                std::min<int>(parallel.trace_steps, static_cast<int>(summary.steps)), path.c_str());
  }
  return summary;
}

}  // namespace

TrainSummary train_data_parallel(const Graph& graph, const TrainConfig& config, const ParallelConfig& parallel,
                                 const data::Dataset& train_set, const data::Dataset* test_set,
                                 const std::function<bool()>& stop_requested) {
  const comm::LaunchEnvironment launch = comm::launch_environment();
  if (launch.size == 1) {
    const std::unique_ptr<DataParallelEngine> engine = make_data_parallel_engine(graph, config, parallel);
    std::string where = "in this process on ";
    for (int r = 0; r < engine->local_replicas(); ++r) {
      if (r > 0) where += ',';
      where += engine->params(r).device().str();
    }
    return train_replicas(*engine, graph, config, parallel, train_set, test_set, stop_requested, where);
  }
  // One replica per process of the job; an error on any rank ends every rank at once.
  comm::MpiRuntime runtime;
  try {
    const std::unique_ptr<DataParallelEngine> engine = make_data_parallel_engine(graph, config, parallel, runtime);
    return train_replicas(*engine, graph, config, parallel, train_set, test_set, stop_requested,
                          "(one per process, MPI " + std::string(runtime.thread_level()) + ")");
  } catch (const std::exception& e) {
    runtime.abort(std::string("error: ") + e.what());
  }
}

}  // namespace baton::cli
