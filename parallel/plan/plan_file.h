// Plan files: the plan `baton plan --json FILE` chose (its report: nodes, stages, predictions) with
// what `baton train --plan FILE` needs to run it as written — the model's graph fingerprint, the
// devices, the gradient synchronisation and the profile and cluster it was predicted on — read back
// and checked against the model, batch and devices of the run.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/plan/cluster.h"
#include "parallel/plan/plan.h"
#include "parallel/plan/planner.h"
#include "parallel/plan/profile.h"
#include "parallel/plan/schedule.h"
#include "runtime/core/device.h"

namespace baton::parallel {

inline constexpr std::string_view kPlanFileFormat = "baton.plan-file/1";

// step_ms, throughput, bubble_fraction, speedup over one device (`single_ms`), peak memory, balance, bytes.
nlohmann::json predicted_json(const EvaluatedPlan& e, double single_ms);
// Each stage's node names and replicas (the stages of a plan in --search's ranking).
nlohmann::json stage_nodes_json(const EvaluatedPlan& e, const Profile& p);
// The plan's report: model, profile, partitioner, schedule, micro_batches, nodes, stages, predicted.
nlohmann::json plan_json(const EvaluatedPlan& e, const Profile& p, double single_ms);
// plan_json and the fields a run reads: format, model_fingerprint, grad_sync, devices (the device
// each of the plan's device ids runs on: "cpu:d" on a cluster of CPU devices, else "cuda:d"),
// planned_with {profile, cluster}.
nlohmann::json plan_file_json(const EvaluatedPlan& e, const Profile& p, const Cluster& cluster, double single_ms,
                              std::string_view grad_sync);

// A hex digest of a profile's structure (node names, types and edges, value sizes, parameter bytes):
// equal for the same graph, whether the profile was measured, derived or is profile_structure's.
std::string graph_fingerprint(const Profile& structure);

struct PlanFileStage {
  std::vector<std::string> nodes;  // node names, as written
  int replicas = 1;
  std::vector<int> devices;  // one per replica: indices into PlanFile::devices
};

// A plan file as read: fields of the right types and counts, not yet checked against a model.
struct PlanFile {
  std::string path;  // every error names it
  std::string model;
  std::string model_fingerprint;
  std::string partitioner;  // how it was split (reported, not rerun)
  int batch = 0;
  int step_micro_batches = 1;  // over all replicas
  int micro_batches = 1;       // per group (the step's with unequal replication), as --micro-batches:
                               // step_micro_batches over groups()
  int chunks_per_device = 1;
  ScheduleKind schedule = ScheduleKind::one_f_one_b;
  std::string grad_sync = "bucket";
  std::vector<std::string> devices;
  std::vector<PlanFileStage> stages;
  double predicted_step_ms = 0;
  Profile profile;  // planned with: the node times the step is predicted from
  Cluster cluster;

  bool unequal_replication() const;
  int groups() const;     // replicas of every stage; 1 with unequal replication
  int positions() const;  // pipeline positions: stages / chunks_per_device
  int units() const;      // stage replicas, one process each under mpirun
};

// Reads `path`; errors name the file, the field and what was expected.
PlanFile read_plan_file(const std::string& path);

// The file's Plan for the model being trained (`structure`: profile_structure of its graph) at
// `batch`: the fingerprint and batch must match, every node of the model in exactly one stage,
// stages in an order the graph's values flow along, one device per replica, micro-batches dividing
// the batch and each stage's replicas dividing the micro-batches.
Plan plan_of_file(const PlanFile& file, const Profile& structure, int64_t batch);

// The devices the file names, all CPU devices or all GPUs; `processes` (mpirun: each process brings
// its own device) checks the kind only, otherwise that each exists.
std::vector<Device> plan_file_devices(const PlanFile& file, bool processes);

}  // namespace baton::parallel
