// `baton bench pipeline`, part 1: the pipeline executor's host overhead per micro-batch per stage,
// on a model of Identity layers over one-sample micro-batches (compute ~0), for GPipe and 1F1B.
#include <cstdio>
#include <string>
#include <vector>

#include "layers/graph_builder.h"
#include "parallel/pipeline/pipeline_executor.h"
#include "parallel/plan/analytic_profile.h"
#include "runtime/core/error.h"
#include "tools/bench_pipeline.h"

namespace baton::cli {
namespace {

using parallel::PipelineExecutor;
using parallel::Plan;
using parallel::ScheduleKind;

constexpr int64_t kFeatures = 4;

// x [M, 4] -> S·k Identity nodes -> cross entropy against labels [M]: topological order is the
// identities, then the loss.
Graph identity_model(int stages, int per_stage, int micro_batches) {
  layers::GraphBuilder g;
  ValueId x = g.input("x", {micro_batches, kFeatures});
  const ValueId labels = g.input("labels", {micro_batches}, DType::i64);
  for (int i = 0; i < stages * per_stage; ++i) {
    std::string name = "id";
    name += std::to_string(i);
    x = g.identity(x, name);
  }
  g.output(g.softmax_cross_entropy(x, labels, "loss"));
  return g.build();
}

// Stage s holds identities s·k .. s·k + k - 1; the last stage also holds the loss.
Plan identity_plan(int stages, int per_stage, int micro_batches) {
  Plan plan;
  plan.model = "identity";
  plan.partitioner = "uniform";
  plan.batch = micro_batches;  // one sample per micro-batch
  plan.micro_batches = micro_batches;
  for (int s = 0; s < stages; ++s) {
    parallel::Stage st;
    for (int i = 0; i < per_stage; ++i) st.nodes.push_back(s * per_stage + i);
    if (s == stages - 1) st.nodes.push_back(stages * per_stage);
    st.devices = {s};
    plan.stages.push_back(st);
  }
  return plan;
}

struct OverheadRun {
  int stages = 0, micro_batches = 0;
  WallTimes times;
};

// Median step of the Identity model over `devices` (one per stage) with M micro-batches.
OverheadRun time_identity_pipeline(const PipelineBenchSettings& s, ScheduleKind kind,
                                   const std::vector<Device>& devices, int micro_batches) {
  const int stages = static_cast<int>(devices.size());
  const Graph graph = identity_model(stages, s.identities_per_stage, micro_batches);
  const Plan plan = identity_plan(stages, s.identities_per_stage, micro_batches);
  const auto consumers = parallel::stage_consumers(plan, parallel::profile_structure(graph, "identity"));
  const parallel::Schedule schedule = parallel::make_schedule(kind, stages, 1, micro_batches, consumers);
  parallel::PipelineOptions options;
  options.model = "identity";
  PipelineExecutor pipe(graph, plan, schedule, devices, options);
  pipe.initialize(1);
  // Data on the first stage's device and labels on the last's: no copy of graph inputs is timed.
  const Stream first = Stream::create(devices.front()), last = Stream::create(devices.back());
  std::vector<float> x(static_cast<size_t>(micro_batches * kFeatures));
  std::vector<int64_t> labels(static_cast<size_t>(micro_batches));
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % kFeatures);
  const std::vector<Tensor> inputs = {Tensor::from_vector(x, Shape{micro_batches, kFeatures}, first),
                                      Tensor::from_vector(labels, Shape{micro_batches}, last)};
  first.synchronize();
  last.synchronize();
  uint64_t seed = 0;
  OverheadRun run{stages, micro_batches, {}};
  run.times = time_wall(s.overhead_warmup, s.overhead_repeats, [&] { pipe.step(inputs, {.seed = ++seed}); });
  return run;
}

double us(double ms) { return ms * 1000.0; }

}  // namespace

nlohmann::json bench_pipeline_overhead(const PipelineBenchSettings& s) {
  const int S = s.stages, M = s.micro_batches;
  const int units = S * M;
  std::printf("\n== host overhead: %d Identity layers per stage, one-sample micro-batches (compute ~0) ==\n",
              s.identities_per_stage);
  std::printf(
      "step = wall time of PipelineExecutor::step (median of %d after %d warm-up); baseline = 1 stage, 1 "
      "micro-batch on %s\n",
      s.overhead_repeats, s.overhead_warmup, s.stage_devices.front().str().c_str());
  std::printf("%-8s %6s %4s | %10s %10s | %12s %12s | %14s %14s\n", "schedule", "stages", "M", "step us", "base us",
              "step/(M*S)", "marginal us", "cpu step us", "cpu marginal");
  nlohmann::json rows = nlohmann::json::array();
  for (const ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
    const OverheadRun base = time_identity_pipeline(s, kind, {s.stage_devices.front()}, 1);
    const OverheadRun run = time_identity_pipeline(s, kind, s.stage_devices, M);
    const double step_us = us(run.times.median_ms), base_us = us(base.times.median_ms);
    const double per_unit_us = step_us / units;
    // The marginal cost of one more (stage, micro-batch) unit: the fixed per-step costs (starting
    // and joining the workers, zeroing, the final synchronisation) are in the baseline's step.
    nlohmann::json marginal = nullptr, cpu_marginal = nullptr;
    const double cpu_step_us = us(run.times.cpu_median_ms), cpu_base_us = us(base.times.cpu_median_ms);
    if (units > 1) {
      marginal = (step_us - base_us) / (units - 1);
      cpu_marginal = (cpu_step_us - cpu_base_us) / (units - 1);
    }
    const auto text = [](const nlohmann::json& v) {
      char buffer[32];
      if (v.is_null()) return std::string("n/a");
      std::snprintf(buffer, sizeof(buffer), "%.2f", v.get<double>());
      return std::string(buffer);
    };
    std::printf("%-8s %6d %4d | %10.1f %10.1f | %12.2f %12s | %14.1f %14s\n",
                std::string(parallel::schedule_kind_name(kind)).c_str(), S, M, step_us, base_us, per_unit_us,
                text(marginal).c_str(), cpu_step_us, text(cpu_marginal).c_str());
    rows.push_back({{"schedule", parallel::schedule_kind_name(kind)},
                    {"stages", S},
                    {"micro_batches", M},
                    {"step_us", step_us},
                    {"step_min_us", us(run.times.min_ms)},
                    {"baseline_step_us", base_us},
                    {"per_micro_batch_per_stage_us", per_unit_us},
                    {"marginal_us_per_micro_batch_per_stage", marginal},
                    {"cpu_step_us", cpu_step_us},
                    {"cpu_baseline_step_us", cpu_base_us},
                    {"cpu_marginal_us_per_micro_batch_per_stage", cpu_marginal}});
  }
  std::printf(
      "step/(M*S): the whole step shared out (fixed costs included); marginal: (step - baseline) / (M*S - 1),\n"
      "the wall cost of one more micro-batch on one more stage (workers overlapping on free cores make it\n"
      "smaller than the host work per unit); cpu: this process's CPU time, the host work itself\n");
  return {{"identities_per_stage", s.identities_per_stage},
          {"samples_per_micro_batch", 1},
          {"warmup", s.overhead_warmup},
          {"repeats", s.overhead_repeats},
          {"target_us_per_micro_batch_per_stage_gpu", 10},
          {"results", rows}};
}

}  // namespace baton::cli
