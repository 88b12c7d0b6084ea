// `baton bench dp`'s report: the table of 1 and N replicas (samples/s, scaling efficiency, hidden
// all-reduce, buckets, the simulator's prediction) and the same figures as JSON.
#include <algorithm>
#include <cstdio>

#include "runtime/core/device_info.h"
#include "tools/bench_dp.h"
#include "tools/rank_output.h"

namespace baton::cli {
namespace {

nlohmann::json measured_json(const DpMeasured& m, int batch) {
  return {{"replicas", m.replicas},
          {"step_ms", m.times.median_ms},
          {"step_min_ms", m.times.min_ms},
          {"samples_per_s", batch / m.times.median_ms * 1e3},
          {"samples_ms", m.times.samples_ms}};
}

}  // namespace

void report_dp_bench(const DpBenchSetup& s, const DpMeasured& one, const DpMeasured& many, const DpPredicted& p) {
  const int n = s.replicas, batch = s.f.batch;
  const auto sps = [&](const DpMeasured& m) { return batch / m.times.median_ms * 1e3; };
  const double efficiency = sps(many) / (n * sps(one));
  std::printf("%-28s %10s %11s | %12s %10s\n", "configuration", "step ms", "samples/s", "predicted ms", "meas/pred");
  const auto line = [&](const char* name, const DpMeasured& m, double predicted) {
    std::printf("%-28s %10.2f %11.1f | ", name, m.times.median_ms, sps(m));
    if (p.unavailable.empty()) {
      std::printf("%12.2f %9.2fx\n", predicted, m.times.median_ms / predicted);
    } else {
      std::printf("%12s %10s\n", "-", "-");
    }
  };
  line("1 replica", one, p.one);
  const std::string name = std::to_string(n) + " replicas" + (s.mpi ? " (processes)" : " (threads)");
  line(name.c_str(), many, p.core_bound);
  if (p.unavailable.empty()) {
    std::printf(
        "predicted (%s, profile measured on cpu:0): %d replicas with a core each %.2f ms, in series %.2f ms, "
        "bound by the %d cores %.2f ms (the headline)\n",
        p.cluster.c_str(), n, p.replicated, p.in_series, s.cores, p.core_bound);
  } else {
    std::printf("predicted: not available (%s)\n", p.unavailable.c_str());
  }
  const double hidden = median(many.hidden), allreduce = median(many.allreduce_ms);
  std::printf("scaling efficiency: %.0f%% (samples/s of %d replicas / (%d x samples/s of 1))\n", 100 * efficiency, n,
              n);
  std::printf("communication: %zu bucket%s (", many.bucket_bytes.size(), many.bucket_bytes.size() == 1 ? "" : "s");
  for (size_t b = 0; b < many.bucket_bytes.size(); ++b) {
    std::printf("%s%s", b > 0 ? ", " : "", human_bytes(static_cast<double>(many.bucket_bytes[b])).c_str());
  }
  std::printf("); all-reduce %.2f ms per step, %.0f%% of it during backward (medians over %d steps, replica 0)\n",
              allreduce, 100 * hidden, s.f.steps);
  // Negative: not measured (the replicas are in other processes).
  const double transfer = many.hidden_transfer.empty() ? -1.0 : median(many.hidden_transfer);
  if (transfer >= 0) {
    std::printf(
        "  counted from the moment the last replica reached each bucket (waiting for a slower replica is load "
        "imbalance): %.0f%% during backward (every replica)\n",
        100 * transfer);
  }
  std::printf(
      "host: %d hardware threads (%s). %d replicas share them with each other, their communication threads "
      "and any other process; under `baton train` the loader's workers compete too (this benchmark feeds "
      "one batch from memory)\n",
      s.cores, query_system_info().cpu.model.c_str(), n);
  if (s.mpi) {
    const std::string others = n == 2 ? "rank 1" : "ranks 1.." + std::to_string(n - 1);
    std::printf(
        "1 replica: measured by rank 0 in its own process before the job's replicas started, while %s waited "
        "without polling (MPI_Ibarrier tested every millisecond)\n",
        others.c_str());
  }

  nlohmann::json json = bench_report(Device::cpu(), {.warmup = s.f.warmup, .repeats = s.f.steps});
  json.erase("results");
  json["benchmark"] = "dp";
  json["model"] = s.f.model;
  json["image_size"] = s.options.image_size;
  json["batch"] = batch;
  json["dtype"] = "f32";
  json["optimizer"] = s.config.optimizer;
  json["lr"] = kDpBenchLr;
  json["replicas"] = n;
  json["mode"] = s.mpi ? "processes" : "threads";
  json["host"] = {{"hardware_threads", s.cores}, {"cpu", query_system_info().cpu.model}};
  json["one_replica"] = measured_json(one, batch);
  json["replicated"] = measured_json(many, batch);
  json["scaling_efficiency"] = efficiency;
  json["communication"] = {{"buckets", many.bucket_bytes.size()},
                           {"bucket_bytes", many.bucket_bytes},
                           {"allreduce_ms", allreduce},
                           {"hidden_fraction", hidden},
                           {"hidden_fraction_per_step", many.hidden},
                           {"hidden_transfer_fraction", transfer >= 0 ? nlohmann::json(transfer) : nlohmann::json()},
                           {"allreduce_ms_per_step", many.allreduce_ms}};
  if (p.unavailable.empty()) {
    json["predicted"] = {{"available", true},
                         {"cluster", p.cluster},
                         {"one_replica_step_ms", p.one},
                         {"one_replica_measured_over_predicted", one.times.median_ms / p.one},
                         {"replicated_step_ms", p.replicated},
                         {"in_series_step_ms", p.in_series},
                         {"core_bound_step_ms", p.core_bound},
                         {"headline", "core_bound"},
                         {"measured_over_predicted", many.times.median_ms / p.core_bound},
                         {"error_percent", 100 * (p.core_bound - many.times.median_ms) / many.times.median_ms}};
  } else {
    json["predicted"] = {{"available", false}, {"reason", p.unavailable}};
  }
  write_bench_json(s.f.json_path, json);
}

}  // namespace baton::cli
