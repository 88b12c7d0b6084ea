// One training run as one library call (`baton train` parses its flags into a TrainRequest and calls
// train): the data opened, the model built, the engine the run's kind asks for (one device, a
// pipeline or the hybrid, data parallelism; in this process or one of several), and the Trainer run
// over it. What the run does is said through a RunReport.
#pragma once

#include <functional>
#include <string>

#include "parallel/comm/communicator.h"
#include "parallel/parallel_config.h"
#include "runtime/data/dataset.h"
#include "runtime/graph/graph.h"
#include "runtime/train/progress.h"
#include "runtime/train/train_config.h"
#include "runtime/train/trainer.h"

namespace baton::parallel {

// How a run trains: on one device, as a pipeline (or the hybrid), or data parallel.
enum class RunKind { single_device, pipelined, data_parallel };

// A run's settings (checked: TrainConfig::validate, with_plan_file) and its kind.
struct TrainRequest {
  TrainConfig train;
  ParallelConfig parallel;
  RunKind kind = RunKind::single_device;
};

// Opens the data, builds the model (config.model_spec, else the registered config.model for the
// data's images or token sequences), trains it as `request.kind` asks until the configured steps or
// epochs are done or stop_requested() turns true, and returns the summary. Under a launcher (mpirun,
// srun) each process trains its part; an error on any rank ends every rank.
TrainSummary train(const TrainRequest& request, RunReport& report, const std::function<bool()>& stop_requested);

// The model a run trains on `train_set` (see train).
Graph build_training_graph(const TrainConfig& config, const data::Dataset& train_set);

// The pieces of train: a pipeline (or the hybrid) and data parallelism, reporting their plan, their
// devices, the step times and the trace they write (parallel.trace).
TrainSummary train_pipelined(const Graph& graph, const std::string& model_name, const TrainConfig& config,
                             const ParallelConfig& parallel, const data::Dataset& train_set,
                             const data::Dataset* test_set, RunReport& report,
                             const std::function<bool()>& stop_requested);
TrainSummary train_data_parallel(const Graph& graph, const TrainConfig& config, const ParallelConfig& parallel,
                                 const data::Dataset& train_set, const data::Dataset* test_set, RunReport& report,
                                 const std::function<bool()>& stop_requested);

// "t.json" -> "t.rank1.json" ("trace" -> "trace.rank1"): the file of `rank` beside `path`, for the
// files each process of a job writes for itself.
std::string rank_path(const std::string& path, int rank);

// The dataset spec a run opens: its `data`, except that a bare "synthetic" with a registered image
// classifier takes the model's input size and classes ("synthetic:3x32x32:10" for resnet20). The
// config, and so the checkpoint, keeps "synthetic".
std::string data_spec_for_model(const TrainConfig& config);

// Collective over `world`: every process of the job trains with the same settings, the whole
// effective train and parallel configuration compared line by line ("lr_schedule.base_lr = 0.1");
// a rank started with another --lr, --seed, --batch-size, optimiser, averaging or --resume fails on
// every rank at once, naming the rank and the setting. Then the data (data::dataset_fingerprint of
// each split: sizes, layout, a hash of the first samples) and, resuming, the newest checkpoint's name.
void check_settings_agree(comm::Communicator& world, const TrainConfig& config, const ParallelConfig& parallel,
                          const data::Dataset& train_set, const data::Dataset* test_set);

// The last line of a model-averaging run, plain data parallel or hybrid: how often the replicas met
// and the bytes the first replica (the hybrid: this process's first group's stages) sent.
std::string averaging_summary(int64_t meetings, int64_t bytes_sent);

// The device of a single-device run: "auto" is a GPU when there is one, else the CPU (reported with
// the reason); another name is checked against this machine. The choice is reported
// ("device: cuda:0 (auto)").
Device single_training_device(const std::string& name, RunReport& report);

}  // namespace baton::parallel
