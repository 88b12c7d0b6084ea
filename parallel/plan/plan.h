// Plan: how a model is split — pipeline stages (node sets of the profile), the replicas of each
// stage (data parallel inside the pipeline) and the devices they run on. Every partitioner
// produces one; the simulator and the pipeline executor consume it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/plan/profile.h"

namespace baton::parallel {

struct Stage {
  std::vector<int> nodes;    // profile node indices, ascending (topological)
  int replicas = 1;          // they take the step's micro-batches in turn (replica k: k, k + r, ...)
                             // and all-reduce the stage's gradients once per step
  std::vector<int> devices;  // cluster device ids, one per replica
};

struct Plan {
  std::string model;
  std::string partitioner;  // "uniform", "block", "antichain", "hypergraph"
  int batch = 0;            // mini-batch, all replicas together
  int micro_batches = 1;    // per step, over all replicas; micro-batch size = batch / micro_batches
  // Interleaved schedules: each pipeline device holds this many stages (stage k runs on the
  // devices of pipeline position k % (stages / chunks_per_device)).
  int chunks_per_device = 1;
  std::vector<Stage> stages;  // pipeline order

  int num_stages() const { return static_cast<int>(stages.size()); }
  double micro_batch_size() const { return static_cast<double>(batch) / micro_batches; }
  int num_devices() const;  // distinct devices over all stages
};

// For each stage, the later stages that read a value it produces (sorted): the sends a schedule
// needs. A stage may feed a stage further than the next one (a skip tensor).
std::vector<std::vector<int>> stage_consumers(const Plan& plan, const Profile& profile);

// Every node in exactly one stage, no empty stage, stage order consistent with the DAG (no value
// flows from a later stage to an earlier one), replicas >= 1 with one device each, batch divisible
// by micro_batches and micro_batches by each stage's replicas. Errors name the stage and node.
void validate_plan(const Plan& plan, const Profile& profile);

// Some stage has more replicas than another (PipeDream's 3-1); equal replication is G groups.
bool unequal_replication(const Plan& plan);

// Gives replica r of stage s a device: with G equal replicas everywhere, group g's pipeline runs
// on devices g*P .. g*P+P-1 (P pipeline positions; a pipeline stays inside a machine); otherwise
// stages take consecutive devices in order. Interleaved plans share devices between the chunks of
// one pipeline position.
void assign_devices(Plan& plan);

// {"format": "baton.plan/2", "model", "partitioner", "batch", "micro_batches", "chunks_per_device",
//  "stages": [{"nodes": [names], "replicas", "devices"}]}. "baton.plan/1" files (micro_batches counted
// per replica, each micro-batch split over a stage's replicas) are read when every stage has the same
// replicas G, as the same work: G x their micro_batches; with unequal replicas they are refused.
nlohmann::json plan_to_json(const Plan& plan, const Profile& profile);
Plan plan_from_json(const nlohmann::json& json, const Profile& profile, std::string_view source);

}  // namespace baton::parallel
