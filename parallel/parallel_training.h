// Parallel training as a library: from a graph, a TrainConfig and a ParallelConfig, the pipeline's
// devices, measured profile, cluster and evaluated plan (plan_pipeline), and the TrainEngine that a
// Trainer runs (make_pipeline_engine) — what `baton train --stages` does, without printing.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "parallel/comm/mpi_runtime.h"
#include "parallel/dp/data_parallel_engine.h"
#include "parallel/parallel_config.h"
#include "parallel/pipeline/pipeline_trainer.h"
#include "parallel/plan/cluster.h"
#include "parallel/plan/planner.h"
#include "parallel/plan/profile.h"
#include "parallel/plan/profiler.h"
#include "runtime/graph/graph.h"
#include "runtime/train/progress.h"
#include "runtime/train/train_config.h"

namespace baton::parallel {

struct PipelineSetup {
  std::vector<Device> available;                   // pipeline position p runs on available[p mod size]
  int micro_batch = 0;                             // samples per micro-batch
  Profile profile;                                 // measured on available.front() at micro_batch
  Cluster cluster;                                 // from the devices in use (cluster_for_devices)
  EvaluatedPlan planned;                           // plan, schedule, stage table, predicted step (and its timeline)
  std::vector<Device> stage_devices;               // one per model stage (group 0's with --groups), or
                                                   // per stage replica under unequal replication
  std::vector<std::vector<Device>> group_devices;  // the hybrid (groups > 1): [group][stage]
};

// The hybrid's devices, [group][stage]: the plan's replica g of stage s runs on cluster device
// plan.stages[s].devices[g], which is available[id mod available.size()].
std::vector<std::vector<Device>> hybrid_devices(const Plan& plan, const std::vector<Device>& available);

// Unequal replication: a device per stage replica in stage order (the units PipelineExecutor runs),
// the plan's cluster device d being available[d mod available.size()].
std::vector<Device> stage_replica_devices(const Plan& plan, const std::vector<Device>& available);

// The devices of the pipeline positions (of every group): parallel.devices, else from config.device
// (auto: every GPU up to G x S, else cpu:0..GS-1; cpu: cpu:0..GS-1; cuda:N: that GPU, one stream
// per stage).
std::vector<Device> pipeline_devices(const ParallelConfig& parallel, const TrainConfig& config);

// How CPU stage workers share the machine's cores, so that their profile is taken as they compute
// and the simulator shares the cores as they do (docs/planner.md, "Calibration"). In one process the
// groups and then each group's pipeline positions split this thread's CPU threads; across processes
// every process has its own share.
struct CpuStageShare {
  int stage_threads = 1;  // the threads each stage worker computes with
  int cores = 1;          // the machine's (across processes) or this process's
  int at_once = 1;        // stage workers computing at the same time: those that fit on the cores

  // The profiler as a stage worker sees the device: with its threads and, in one process, the
  // workers that fit on the cores training beside the timed one (across processes those are the
  // other ranks, measuring at the same time).
  void apply(ProfilerOptions& options, bool processes) const;
  // Stage workers of a node computing at full speed at once (Cluster::set_concurrent_compute).
  int concurrent_compute() const;
};
CpuStageShare cpu_stage_share(int groups, int stages, bool processes);

// Checks `parallel`, chooses the devices, measures the compute times on the first device at the
// micro-batch size (1 warm-up, 3 repeats), picks the cluster and evaluates the plan (the predicted
// timeline is recorded when parallel.trace is set). `report` (when given) hears one line as profiling starts.
// With `world` (the hybrid across processes; collective), rank 0 alone measures and shares the
// profile; every process plans, then takes rank 0's plan (and the schedule from it), so that all
// run the same plan. With parallel.plan_file, that plan as written instead (plan_file_run.h).
PipelineSetup plan_pipeline(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                            const ParallelConfig& parallel, RunReport* report = nullptr,
                            comm::Communicator* world = nullptr);

// The engine that trains `setup`'s plan; `graph` must outlive it.
std::unique_ptr<PipelineTrainEngine> make_pipeline_engine(const Graph& graph, const std::string& model_name,
                                                          const TrainConfig& config, const ParallelConfig& parallel,
                                                          const PipelineSetup& setup);

// The stage table of a plan (one line per stage after the heading: nodes, forward/backward ms,
// parameter, boundary and memory sizes, replicas, devices), as `baton plan` and `baton train
// --stages` print it. `device_names`: one per stage, shown instead of the plan's cluster device ids
// when given.
std::string stage_table_text(const EvaluatedPlan& e, const Profile& p,
                             const std::vector<std::string>& device_names = {});

// Across processes (collective): rank 0's profile on every process (`mine` is read on rank 0 only).
Profile share_profile(comm::Communicator& world, const Profile& mine);

// Across processes of one machine (collective): the link between two of them, measured by ping-pong
// through `world` between ranks 0 and 1 at 64 KiB and 1 MiB (median of 15 round trips after 3
// warm-ups each), fitted to latency + bytes / bandwidth (when the larger message did not take clearly
// longer, its time alone gives the bandwidth and the latency is 0); every rank returns rank 0's figures.
// Fewer than two ranks: a default Link (nothing measured).
Link measure_process_link(comm::Communicator& world);
// The message sizes measure_process_link times, and its fit of their one-way times in microseconds.
inline constexpr std::array<int64_t, 2> kLinkProbeBytes = {64 << 10, 1 << 20};
Link fit_process_link(double small_us, double large_us);

// Across processes (collective): rank 0's profile and plan on every process, and the schedule made
// from them as evaluate_plan makes it. The measured times (and a cluster's measured links) differ
// between processes; the plan they run together must not. (The other fields of `planned` stay each
// process's own.)
void share_plan(comm::Communicator& world, Profile& profile, EvaluatedPlan& planned);

// The engine of one process of the hybrid across processes (mpirun -np G x S, `world` over them):
// world rank g S + s runs stage s of group g on `device` (mpi_process_device; `setup` from
// plan_pipeline with `world`). On GPUs the stages talk through NCCL bootstrapped over `world`.
std::unique_ptr<PipelineTrainEngine> make_pipeline_engine(const Graph& graph, const std::string& model_name,
                                                          const TrainConfig& config, const ParallelConfig& parallel,
                                                          const PipelineSetup& setup,
                                                          std::shared_ptr<comm::Communicator> world, Device device);

struct ParallelTraining {
  PipelineSetup setup;
  std::unique_ptr<PipelineTrainEngine> engine;  // for Trainer(graph, config, train, test, *engine)
};

// plan_pipeline, then make_pipeline_engine (with a plan file, the configuration with_plan_file gives).
ParallelTraining make_parallel_training(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                                        const ParallelConfig& parallel,
                                        const std::function<void(const std::string&)>& progress = {});

// The devices of data-parallel replicas: parallel.devices (one per replica), else cuda:0..N-1
// (config.device cuda, or auto on a machine with GPUs: at least N of them), else the virtual CPU
// devices cpu:0..N-1. All CPU devices or all GPUs, each device once.
std::vector<Device> data_parallel_devices(const ParallelConfig& parallel, const TrainConfig& config);

// The engine that trains `graph` as parallel.data_parallel in-process replicas (checked first);
// `graph` must outlive it.
std::unique_ptr<DataParallelEngine> make_data_parallel_engine(const Graph& graph, const TrainConfig& config,
                                                              const ParallelConfig& parallel);

// The device of one process of a multi-process job: the GPU of its local rank (config.device cuda,
// or auto on a machine with GPUs; an error naming the rank when its node has too few) or cpu:0.
Device mpi_process_device(const TrainConfig& config, const comm::MpiRuntime& runtime);

// The engine of one process of a multi-process job (mpirun -np N): one replica, on the GPU of the
// process's local rank (config.device cuda, or auto with GPUs; NCCL bootstrapped over MPI) or on
// cpu:0 (the mpi backend); parallel.data_parallel must be N. Collective.
std::unique_ptr<DataParallelEngine> make_data_parallel_engine(const Graph& graph, const TrainConfig& config,
                                                              const ParallelConfig& parallel,
                                                              const comm::MpiRuntime& runtime);

}  // namespace baton::parallel
