// A run as data parallelism, in this process or one replica per process of a job: the replicas and
// their gradient buckets (or model averaging) reported, the Trainer run over the engine, what the
// communication did and the measured trace (see parallel_training_run.h).
#include <algorithm>

#include "parallel/comm/launch_environment.h"
#include "parallel/comm/mpi_runtime.h"
#include "parallel/parallel_training.h"
#include "parallel/parallel_training_run.h"
#include "parallel/plan/trace.h"

namespace baton::parallel {
namespace {

// "data parallel: ..." — where the replicas train and how their gradients or models meet.
std::string replicas_line(const DataParallelEngine& engine, const TrainConfig& config, const ParallelConfig& parallel,
                          const std::string& where) {
  const auto& buckets = engine.bucket_plan().buckets;
  const long long share = config.batch_size / engine.replicas();
  if (parallel.model_averaging == Averaging::none) {
    return formatted(
        "data parallel: %d replicas %s, %lld samples each per step; %zu gradient bucket%s, all-reduced "
        "(mean) during backward",
        engine.replicas(), where.c_str(), share, buckets.size(), buckets.size() == 1 ? "" : "s");
  }
  const std::string first =
      parallel.model_averaging == Averaging::post_local
          ? "gradients all-reduced for the first " + std::to_string(parallel.local_after) + " steps, then "
          : "";
  return formatted(
      "data parallel: %d replicas %s, %lld samples each per step; model averaging (%s): %seach replica steps on "
      "its own gradients, %s every %d steps (%s exchange)",
      engine.replicas(), where.c_str(), share, std::string(averaging_name(parallel.model_averaging)).c_str(),
      first.c_str(),
      parallel.model_averaging == Averaging::bmuf    ? "block momentum update"
      : parallel.model_averaging == Averaging::easgd ? "elastic move towards the centre"
                                                     : "parameters averaged",
      parallel.average_every, std::string(exchange_name(parallel.averaging_exchange)).c_str());
}

TrainSummary train_replicas(DataParallelEngine& engine, const Graph& graph, const TrainConfig& config,
                            const ParallelConfig& parallel, const data::Dataset& train_set,
                            const data::Dataset* test_set, RunReport& report,
                            const std::function<bool()>& stop_requested, const std::string& where) {
  report.line(replicas_line(engine, config, parallel, where));
  if (!parallel.trace.empty()) engine.set_trace_steps(parallel.trace_steps);
  Trainer trainer(graph, config, train_set, test_set, engine);
  const TrainSummary summary = trainer.run(stop_requested);
  if (summary.steps > 0 && parallel.model_averaging == Averaging::none) {
    report.line(formatted("communication: %.0f%% of the last step's all-reduce time ran during backward (replica 0)",
                          100 * hidden_communication_fraction(engine.last_step(0))));
  } else if (parallel.model_averaging != Averaging::none) {
    report.line(averaging_summary(engine.averaging_meetings(), engine.averaging_bytes_sent(0)));
  }
  if (!parallel.trace.empty()) {
    // Several processes: each writes its replicas' lanes to a file of its own ("t.json" -> "t.rank1.json").
    const std::string path = engine.local_replicas() < engine.replicas()
                                 ? rank_path(parallel.trace, engine.data_shard().index)
                                 : parallel.trace;
    write_chrome_trace(path, chrome_trace_json(engine.take_trace(), engine.trace_lanes(), {"predicted", "measured"}));
    report.line(formatted("wrote %d measured steps of every replica to %s (open in Perfetto or chrome://tracing)",
                          std::min<int>(parallel.trace_steps, static_cast<int>(summary.steps)), path.c_str()));
  }
  return summary;
}

}  // namespace

std::string averaging_summary(int64_t meetings, int64_t bytes_sent) {
  return formatted("model averaging: the replicas met %lld times; replica 0 sent %.3f MB in the averaging exchange",
                   static_cast<long long>(meetings), static_cast<double>(bytes_sent) / 1e6);
}

TrainSummary train_data_parallel(const Graph& graph, const TrainConfig& config, const ParallelConfig& parallel,
                                 const data::Dataset& train_set, const data::Dataset* test_set, RunReport& report,
                                 const std::function<bool()>& stop_requested) {
  const comm::LaunchEnvironment launch = comm::launch_environment();
  if (launch.size == 1) {
    const std::unique_ptr<DataParallelEngine> engine = make_data_parallel_engine(graph, config, parallel);
    std::string where = "in this process on ";
    for (int r = 0; r < engine->local_replicas(); ++r) {
      if (r > 0) where += ',';
      where += engine->params(r).device().str();
    }
    return train_replicas(*engine, graph, config, parallel, train_set, test_set, report, stop_requested, where);
  }
  // One replica per process of the job; an error on any rank ends every rank at once.
  comm::MpiRuntime runtime;
  try {
    check_settings_agree(*runtime.world(), config, parallel, train_set, test_set);
    const std::unique_ptr<DataParallelEngine> engine = make_data_parallel_engine(graph, config, parallel, runtime);
    return train_replicas(*engine, graph, config, parallel, train_set, test_set, report, stop_requested,
                          "(one per process, MPI " + std::string(runtime.thread_level()) + ")");
  } catch (const std::exception& e) {
    runtime.abort(std::string("error: ") + e.what());
  }
}

}  // namespace baton::parallel
