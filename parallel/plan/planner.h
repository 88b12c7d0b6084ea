// The planner: turns (partitioner, groups x stages, schedule, micro-batches) choices into a
// partitioned plan, its validated schedule and its simulated step, and searches over them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "parallel/plan/cluster.h"
#include "parallel/plan/cost_model.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/plan.h"
#include "parallel/plan/profile.h"
#include "parallel/plan/schedule.h"
#include "parallel/plan/simulator.h"

namespace baton::parallel {

struct PlanChoice {
  std::string partitioner = "block";
  int groups = 1;  // data-parallel replicas of every stage
  int stages = 1;  // pipeline positions (devices per group)
  int chunks = 1;  // stages per position (interleaved schedule)
  // Per group: the step has groups x micro_batches (free replication: micro_batches in all), each
  // replica of a stage taking whole micro-batches in turn.
  int micro_batches = 1;
  ScheduleKind schedule = ScheduleKind::one_f_one_b;
  bool free_replication = false;  // antichain: per-stage replication within groups x stages devices
  bool all_devices = false;       // free replication on exactly groups x stages devices (processes)

  std::string label() const;  // "block 2x4 1f1b M=8"
};

struct PlanSettings {
  int batch = 128;
  double memory_cap_bytes = 0;      // 0: the cluster device's memory
  int64_t bucket_bytes = 25 << 20;  // data-parallel all-reduce buckets when a plan has one stage
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::ring;
  bool record_trace = false;
};

struct EvaluatedPlan {
  PlanChoice choice;
  Plan plan;
  Schedule schedule;
  std::vector<StageSummary> table;  // with the schedule's peak in-flight micro-batches
  SimulationResult predicted;
  double balance = 1;              // slowest stage's compute / mean stage compute (partition_quality)
  double communication_bytes = 0;  // activation bytes crossing stages per step, all groups (forward)
  int64_t peak_memory_bytes = 0;   // largest stage memory
  std::string note;                // the partitioner's remark (hypergraph: a relaxed balance bound)

  // choice.label(), with free replication's actual stages ("antichain+replication 4-2-1 1f1b M=16").
  std::string label() const;
};

// The step's micro-batches over all replicas (the plan's micro_batches) for a choice.
int step_micro_batches(const PlanChoice& choice);

// The schedule a plan runs: `kind` over the plan's positions, chunks, micro-batches, stage consumers
// and replicas (with an all_reduce per stage when some stage is replicated).
Schedule plan_schedule(const Plan& plan, const Profile& profile, ScheduleKind kind);

// Partitions, schedules, validates and simulates one choice. Infeasible choices (memory cap,
// indivisible batch, too few devices, a schedule that cannot run) throw baton::Error saying why.
EvaluatedPlan evaluate_plan(const PlanChoice& choice, const Profile& profile, const Cluster& cluster,
                            const PlanSettings& settings);

// Schedules, validates and simulates a plan already split (as `choice` describes it), with the
// memory cap evaluate_plan applies.
EvaluatedPlan evaluate_split_plan(const PlanChoice& choice, Plan plan, const Profile& profile, const Cluster& cluster,
                                  const PlanSettings& settings);

// The whole batch on one device of the cluster (one stage, one micro-batch): the speedup baseline.
EvaluatedPlan single_device_plan(const Profile& profile, const Cluster& cluster, const PlanSettings& settings);

struct SearchEntry {
  PlanChoice choice;
  std::optional<EvaluatedPlan> result;  // empty: infeasible
  std::string reason;                   // why it is infeasible
};

// Every groups x stages factoring of `devices`, each partitioner and schedule (interleaved with 2
// chunks where the model has the nodes) and micro-batch counts S, 2S, 4S, 8S (dividing the batch
// per group), plus antichain with free replication; feasible entries first, fastest first.
std::vector<SearchEntry> search_plans(int devices, const Profile& profile, const Cluster& cluster,
                                      const PlanSettings& settings);

}  // namespace baton::parallel
