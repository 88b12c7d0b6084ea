// `baton bench hybrid`: parsing layouts, summing a traced step's all-reduces and their hidden share,
// and the report (table and JSON).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "tools/bench_hybrid.h"

namespace baton::cli::hybrid_bench {

using parallel::TraceEvent;

std::vector<Layout> parse_layouts(const std::string& text) {
  std::vector<Layout> out;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    Layout l;
    char x = 0;
    std::stringstream in(item);
    BATON_CHECK((in >> l.groups >> x >> l.stages) && x == 'x' && in.peek() == EOF && l.groups >= 1 && l.stages >= 1,
                "--layouts '", text, "': '", item, "' is not GxS with G, S >= 1 (e.g. 2x2)");
    out.push_back(l);
  }
  BATON_CHECK(!out.empty(), "--layouts: no layout given (e.g. 1x2,2x2)");
  return out;
}

namespace {

// The intervals' union, merged and sorted.
Spans merged(Spans spans) {
  std::sort(spans.begin(), spans.end());
  Spans out;
  for (const auto& s : spans) {
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace

Spans compute_spans(const std::vector<TraceEvent>& events, double shift_us) {
  Spans compute;
  for (const TraceEvent& e : events) {
    if (e.category == "forward" || e.category == "backward")
      compute.emplace_back(shift_us + e.start_us, shift_us + e.start_us + e.duration_us);
  }
  return compute;
}

void add_allreduces(const std::vector<TraceEvent>& events, double shift_us, Spans compute, Row& row, double& hidden_us,
                    double& total_us) {
  compute = merged(std::move(compute));
  for (const TraceEvent& e : events) {
    if (e.category != "allreduce") continue;
    row.messages += 1;
    row.bytes += e.args.value("bytes", 0.0);
    row.allreduce_ms += e.duration_us / 1000;
    const double a = shift_us + e.start_us, b = a + e.duration_us;
    total_us += b - a;
    for (const auto& [c0, c1] : compute) hidden_us += std::max(0.0, std::min(b, c1) - std::max(a, c0));
  }
}

void report(const Flags& f, const std::vector<Row>& rows, int cores, int processes) {
  std::printf("%-7s %-9s %9s %9s | %8s %10s %10s %7s | %9s %9s %9s\n", "layout", "sync", "step ms", "samples/s",
              "messages", "bytes", "per msg", "hidden", "pred ms", "core-bound", "meas/pred");
  nlohmann::json runs = nlohmann::json::array();
  for (const Row& r : rows) {
    const double samples = f.batch / (r.times.median_ms / 1000);
    const bool predicted = r.unpredicted.empty();
    std::printf("%-7s %-9s %9.2f %9.1f | %8.0f %10s %10s %6.0f%% | %9.2f %9.2f %8.2fx\n", r.layout.name().c_str(),
                r.strategy.c_str(), r.times.median_ms, samples, r.messages, human_bytes(r.bytes).c_str(),
                r.messages > 0 ? human_bytes(r.bytes / r.messages).c_str() : "-", 100 * r.hidden, r.predicted_ms,
                r.core_bound_ms, predicted ? r.times.median_ms / r.core_bound_ms : 0.0);
    nlohmann::json run = {{"groups", r.layout.groups},
                          {"stages", r.layout.stages},
                          {"grad_sync", r.strategy},
                          {"step_ms", r.times.median_ms},
                          {"step_min_ms", r.times.min_ms},
                          {"samples_ms", r.times.samples_ms},
                          {"samples_per_s", samples},
                          {"allreduce_messages_per_step", r.messages},
                          {"allreduce_bytes_per_step", r.bytes},
                          {"allreduce_ms_per_step", r.allreduce_ms},
                          {"hidden_fraction", r.hidden}};
    if (predicted) {
      run["predicted"] = {{"available", true},
                          {"step_ms", r.predicted_ms},
                          {"core_bound_step_ms", r.core_bound_ms},
                          {"measured_over_predicted", r.times.median_ms / r.core_bound_ms}};
    } else {
      run["predicted"] = {{"available", false}, {"reason", r.unpredicted}};
    }
    runs.push_back(std::move(run));
  }
  std::printf(
      "messages and bytes: group 0's all-reduces per step (each group sends the same); hidden: the share of their "
      "time during which %s was computing. pred ms: the simulator, profiled as each layout's stage workers compute "
      "and sharing the cores as they do (it does not tell bucket from partition); core-bound: no faster than the whole "
      "step's work over the %d hardware threads, which "
      "every layout's %s share with their communication threads\n",
      processes > 0 ? "some process of the group" : "some pipeline position of the group", cores,
      processes > 0 ? "processes" : "devices");
  nlohmann::json json = bench_report(Device::cpu(), {.warmup = f.warmup, .repeats = f.steps});
  json.erase("results");
  json["benchmark"] = "hybrid";
  json["model"] = f.model;
  json["batch"] = f.batch;
  json["micro_batches_per_group"] = f.micro_batches;
  json["schedule"] = f.schedule;
  json["dtype"] = "f32";
  json["lr"] = kLr;
  json["host"] = {{"hardware_threads", cores}, {"cpu", query_system_info().cpu.model}};
  json["mode"] = processes > 0 ? "processes" : "threads";
  json["processes"] = processes > 0 ? processes : 1;
  json["runs"] = std::move(runs);
  write_bench_json(f.json_path, json);
}

}  // namespace baton::cli::hybrid_bench
