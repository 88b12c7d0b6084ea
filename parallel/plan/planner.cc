// Planner: evaluate one (partitioner, layout, schedule, micro-batches) choice, or search them all.
#include "parallel/plan/planner.h"

#include <algorithm>
#include <cmath>

#include "parallel/plan/partition_quality.h"
#include "runtime/core/error.h"
#include "runtime/core/stop_request.h"

namespace baton::parallel {

std::string PlanChoice::label() const {
  std::string s = partitioner;
  if (free_replication) s += "+replication";
  s += ' ';
  s += std::to_string(groups);
  s += 'x';
  s += std::to_string(stages);
  s += ' ';
  s += schedule_kind_name(schedule);
  if (chunks > 1) {
    s += " v=";
    s += std::to_string(chunks);
  }
  s += " M=";
  s += std::to_string(micro_batches);
  return s;
}

std::string EvaluatedPlan::label() const {
  if (!choice.free_replication) return choice.label();
  std::string replicas;
  for (const Stage& s : plan.stages) {
    if (!replicas.empty()) replicas += '-';
    replicas += std::to_string(s.replicas);
  }
  std::string s =
      choice.partitioner + "+replication " + replicas + " " + std::string(schedule_kind_name(choice.schedule));
  s += " M=";
  s += std::to_string(choice.micro_batches);
  return s;
}

int step_micro_batches(const PlanChoice& choice) {
  return choice.free_replication ? choice.micro_batches : choice.groups * choice.micro_batches;
}

Schedule plan_schedule(const Plan& plan, const Profile& profile, ScheduleKind kind) {
  std::vector<int> replicas;
  for (const Stage& s : plan.stages) replicas.push_back(s.replicas);
  const bool replicated = std::any_of(replicas.begin(), replicas.end(), [](int r) { return r > 1; });
  const int positions = plan.num_stages() / plan.chunks_per_device;
  return make_schedule(kind, positions, plan.chunks_per_device, plan.micro_batches, stage_consumers(plan, profile),
                       replicated, replicas);
}

EvaluatedPlan evaluate_plan(const PlanChoice& choice, const Profile& profile, const Cluster& cluster,
                            const PlanSettings& settings) {
  PartitionRequest r;
  r.profile = &profile;
  r.cluster = &cluster;
  r.stages = choice.stages * choice.chunks;
  r.chunks_per_device = choice.chunks;
  r.replicas = choice.free_replication ? 1 : choice.groups;
  r.batch = settings.batch;
  r.micro_batches = step_micro_batches(choice);
  r.schedule = choice.schedule;
  r.memory_cap_bytes = settings.memory_cap_bytes;
  r.free_replication = choice.free_replication;
  r.devices = choice.groups * choice.stages;
  r.all_devices = choice.all_devices;

  if (choice.partitioner == "hypergraph") {
    HypergraphResult h = partition_hypergraph_detailed(r);
    EvaluatedPlan e = evaluate_split_plan(choice, std::move(h.plan), profile, cluster, settings);
    e.note = std::move(h.note);
    return e;
  }
  return evaluate_split_plan(choice, partition(choice.partitioner, r), profile, cluster, settings);
}

EvaluatedPlan evaluate_split_plan(const PlanChoice& choice, Plan plan, const Profile& profile, const Cluster& cluster,
                                  const PlanSettings& settings) {
  EvaluatedPlan e;
  e.choice = choice;
  e.plan = std::move(plan);
  e.schedule = plan_schedule(e.plan, profile, choice.schedule);
  const ScheduleCheck check = validate_schedule(e.schedule, stage_consumers(e.plan, profile));
  e.table = stage_table(e.plan, profile, check.peak_in_flight);
  SimulationOptions sim;
  sim.bucket_bytes = e.plan.num_stages() == 1 ? settings.bucket_bytes : 0;
  sim.algorithm = settings.algorithm;
  sim.record_trace = settings.record_trace;
  e.predicted = simulate(e.plan, e.schedule, profile, cluster, sim);

  const double cap = settings.memory_cap_bytes > 0
                         ? settings.memory_cap_bytes
                         : (cluster.device(0).memory_gb > 0 ? cluster.device(0).memory_gb * 1e9 : 1e300);
  for (const StageSummary& row : e.table) {
    e.peak_memory_bytes = std::max(e.peak_memory_bytes, row.memory_bytes);
    BATON_CHECK(static_cast<double>(row.memory_bytes) <= cap, "stage ", row.stage, " needs ",
                static_cast<double>(row.memory_bytes) / 1e9, " GB under the ", schedule_kind_name(choice.schedule),
                " schedule, over the memory cap of ", cap / 1e9, " GB");
  }
  const PartitionQuality quality = partition_quality(e.plan, profile);
  e.balance = quality.balance_ratio;
  e.communication_bytes = static_cast<double>(quality.comm_bytes) * e.plan.micro_batches;
  return e;
}

EvaluatedPlan single_device_plan(const Profile& profile, const Cluster& cluster, const PlanSettings& settings) {
  PlanSettings one = settings;
  one.memory_cap_bytes = 1e300;  // the baseline is a time, whether or not it would fit
  PlanChoice c;
  c.partitioner = "uniform";
  c.schedule = ScheduleKind::gpipe;
  return evaluate_plan(c, profile, cluster, one);
}

std::vector<SearchEntry> search_plans(int devices, const Profile& profile, const Cluster& cluster,
                                      const PlanSettings& settings) {
  BATON_CHECK(devices >= 1 && devices <= cluster.num_devices(), "search: ", devices, " devices requested; cluster '",
              cluster.name(), "' has ", cluster.num_devices());
  std::vector<PlanChoice> choices;
  for (int stages = 1; stages <= devices; ++stages) {
    if (devices % stages != 0) continue;
    const int groups = devices / stages;
    if (settings.batch % groups != 0) continue;
    const int per_group = settings.batch / groups;
    if (stages == 1) {  // data parallel: nothing to partition or schedule
      choices.push_back({"uniform", groups, 1, 1, 1, ScheduleKind::gpipe, false});
      continue;
    }
    for (int factor : {1, 2, 4, 8}) {
      const int m = stages * factor;
      if (m > per_group || per_group % m != 0) continue;
      for (const std::string& partitioner : partitioner_names()) {
        for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
          const int chunks = kind == ScheduleKind::interleaved ? 2 : 1;
          if (stages * chunks > profile.num_nodes()) continue;
          choices.push_back({partitioner, groups, stages, chunks, m, kind, false});
        }
      }
    }
  }
  // PipeDream: stages and their replication chosen together over all the devices.
  if (devices > 1) {
    for (int factor : {1, 2, 4}) {
      const int m = devices * factor;
      if (settings.batch % m == 0) choices.push_back({"antichain", 1, devices, 1, m, ScheduleKind::one_f_one_b, true});
    }
  }
  std::vector<SearchEntry> entries;
  for (const PlanChoice& c : choices) {
    SearchEntry entry;
    entry.choice = c;
    check_stop_request("searching the plans");
    try {
      entry.result = evaluate_plan(c, profile, cluster, settings);
    } catch (const Interrupted&) {
      throw;  // not a reason to skip the choice: the search stops
    } catch (const Error& e) {
      entry.reason = e.what();
    }
    entries.push_back(std::move(entry));
  }
  std::stable_sort(entries.begin(), entries.end(), [](const SearchEntry& a, const SearchEntry& b) {
    if (a.result.has_value() != b.result.has_value()) return a.result.has_value();
    if (!a.result) return false;
    return a.result->predicted.step_ms < b.result->predicted.step_ms;
  });
  return entries;
}

}  // namespace baton::parallel
