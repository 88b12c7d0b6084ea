// Replicas take whole micro-batches in turn: equal replication is G groups of the pipeline (each
// replica's program is the group's schedule), unequal replication (PipeDream's 3-1) is scheduled,
// simulated replica by replica and chosen by the antichain partitioner with r | M only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "parallel/plan/partitioner.h"
#include "parallel/plan/planner.h"
#include "parallel/plan/schedule.h"
#include "parallel/plan/simulator.h"
#include "tests/parallel/plan/dag_fixtures.h"
#include "tests/parallel/plan/simulator_fixtures.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

TEST(ReplicaSchedules, EachOfGEqualReplicasRunsTheGroupsSchedule) {
  for (const ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
    const int chunks = kind == ScheduleKind::interleaved ? 2 : 1;
    for (const int groups : {1, 2, 3}) {
      for (const int per_group : {1, 3, 4}) {
        const int stages = 3 * chunks;
        const Schedule step = make_schedule(kind, 3, chunks, groups * per_group, {}, true,
                                            std::vector<int>(static_cast<size_t>(stages), groups));
        const ScheduleCheck check = validate_schedule(step);
        const Schedule group = make_schedule(kind, 3, chunks, per_group, {}, true);
        EXPECT_EQ(check.peak_in_flight, validate_schedule(group).peak_in_flight);
        for (int g = 0; g < groups; ++g) {
          EXPECT_EQ(group_schedule(step, g).programs, group.programs)
              << schedule_kind_name(kind) << " G=" << groups << " M/G=" << per_group << " group " << g;
          for (int p = 0; p < 3; ++p) {
            for (const Instruction& in : replica_program(step, p, g)) {
              if (in.micro_batch >= 0) {
                EXPECT_EQ(in.micro_batch % groups, g);  // round robin
              }
            }
          }
        }
      }
    }
  }
}

TEST(ReplicaSchedules, UnequalReplicationIsValidAndFeedsEveryLaterReplica) {
  for (const std::vector<int>& replicas : std::vector<std::vector<int>>{{3, 1}, {1, 3}, {2, 1, 2}, {4, 2, 1}}) {
    const int stages = static_cast<int>(replicas.size());
    for (const ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
      const Schedule s = make_schedule(kind, stages, 1, 12, {}, true, replicas);
      const ScheduleCheck check = validate_schedule(s);
      for (int st = 0; st < stages; ++st) {
        EXPECT_LE(check.peak_in_flight[st], 12 / replicas[static_cast<size_t>(st)]);
        EXPECT_GE(check.peak_in_flight[st], 1);
      }
    }
  }
  EXPECT_ERROR_MENTIONS("divide", make_schedule(ScheduleKind::gpipe, 2, 1, 4, {}, true, {3, 1}));
  EXPECT_ERROR_MENTIONS("same number of replicas",
                        make_schedule(ScheduleKind::interleaved, 2, 2, 4, {}, true, {2, 1, 2, 1}));
}

// Stage 0 costs three times stage 1 per micro-batch: three replicas of stage 0 and one of stage 1
// (PipeDream's 3-1) keep both busy. Each micro-batch m runs on stage 0's replica m mod 3.
TEST(ReplicaSimulation, ThreeReplicasOfASlowStageFeedOneFastStage) {
  const Profile profile = fixtures::chain_profile({.nodes = 4, .fwd_ms = 1.0, .bwd_ms = 2.0});
  Plan plan = fixtures::chain_plan(profile, 2, 12, 12);  // micro-batches of one sample
  plan.stages[0].nodes = {0, 1, 2};
  plan.stages[1].nodes = {3};
  plan.stages[0].replicas = 3;
  assign_devices(plan);
  SimulationOptions options;
  options.free_communication = true;
  const Cluster cluster = fixtures::test_cluster(4);
  const SimulationResult one =
      simulate(plan, plan_schedule(plan, profile, ScheduleKind::one_f_one_b), profile, cluster, options);
  // Per micro-batch of the step: stage 0 computes 9 ms on each of 3 replicas, stage 1 3 ms: a
  // period of 3 ms, 12 micro-batches, plus the pipeline's fill.
  EXPECT_GE(one.step_ms, 12 * 3.0 - 1e-9);
  EXPECT_LE(one.step_ms, (12 + 2 * 3) * 3.0 + 1e-9);
  Plan alone = plan;
  alone.stages[0].replicas = 1;
  assign_devices(alone);
  const SimulationResult single =
      simulate(alone, plan_schedule(alone, profile, ScheduleKind::one_f_one_b), profile, cluster, options);
  EXPECT_GE(single.step_ms, 12 * 9.0 - 1e-9);  // stage 0's work in series
  EXPECT_LT(one.step_ms, single.step_ms / 2);
  // Each forward of stage 0 ran on the device of replica m mod 3, and stage 1 saw every micro-batch.
  int stage1 = 0;
  for (const TraceEvent& e : one.events) {
    if (e.category != "forward") continue;
    const int m = e.args.at("micro_batch").get<int>();
    const std::string& lane = one.lanes.at(static_cast<size_t>(e.thread)).name;
    if (e.args.at("stage").get<int>() == 0) {
      EXPECT_EQ(lane, "device " + std::to_string(m % 3) + " compute") << e.name;
    } else {
      EXPECT_EQ(lane, "device 3 compute") << e.name;
      ++stage1;
    }
  }
  EXPECT_EQ(stage1, 12);
  EXPECT_EQ(one.peak_in_flight[0], 2);  // 1F1B: each replica holds 2, as one replica of 2 stages
  std::printf("3-1 replication, 12 micro-batches: %.1f ms simulated against %.1f ms unreplicated\n", one.step_ms,
              single.step_ms);
}

// A free-replication request: at most `stages` stages on up to `devices` devices, M micro-batches of
// one sample.
PartitionRequest free_request(const Profile& profile, const Cluster& cluster, int stages, int micro_batches,
                              int devices) {
  PartitionRequest r = dag_fixtures::request_on(profile, cluster, stages);
  r.batch = micro_batches;
  r.micro_batches = micro_batches;
  r.schedule = ScheduleKind::one_f_one_b;
  r.free_replication = true;
  r.devices = devices;
  return r;
}

// The antichain DP with free replication may replicate a stage 3 times with micro-batches of one
// sample (3 | M), which splitting a micro-batch across replicas never allowed.
TEST(ReplicaPartition, FreeReplicationNeedsReplicasToDivideTheMicroBatchCountOnly) {
  // Node 0 costs three times node 1: on 4 devices the best is 3 replicas of node 0, one of node 1
  // (one stage on 4 replicas would tie, but 4 does not divide the 6 micro-batches).
  Profile profile = fixtures::chain_profile({.nodes = 2, .fwd_ms = 1.0, .bwd_ms = 2.0});
  for (double& ms : profile.nodes[0].fwd_ms) ms *= 3;
  for (double& ms : profile.nodes[0].bwd_ms) ms *= 3;
  const Cluster cluster = fixtures::test_cluster(4);
  PartitionRequest r = free_request(profile, cluster, 2, 6, 4);
  const Plan plan = partition_antichain(r);
  ASSERT_EQ(plan.num_stages(), 2);
  EXPECT_EQ(plan.stages[0].replicas, 3);
  EXPECT_EQ(plan.stages[1].replicas, 1);
  EXPECT_NO_THROW(validate_plan(plan, profile));
  r.micro_batches = 2;  // 3 replicas cannot share 2 micro-batches
  r.batch = 2;
  for (const Stage& s : partition_antichain(r).stages) EXPECT_NE(s.replicas, 3);
}

// Across processes every process runs one stage replica: with all_devices the plan uses exactly the
// devices, or the partitioner says why it cannot.
TEST(ReplicaPartition, AllDevicesUsesEveryDeviceOrSaysWhyNot) {
  const Profile profile = fixtures::chain_profile({.nodes = 3, .fwd_ms = 1.0, .bwd_ms = 2.0});
  const Cluster cluster = fixtures::test_cluster(6);
  PartitionRequest r = free_request(profile, cluster, 3, 12, 6);
  r.all_devices = true;
  for (const int devices : {1, 2, 3, 4, 5, 6}) {
    r.devices = devices;
    const Plan plan = partition_antichain(r);
    int used = 0;
    for (const Stage& s : plan.stages) used += s.replicas;
    EXPECT_EQ(used, devices);
    EXPECT_NO_THROW(validate_plan(plan, profile));
  }
  r.stages = 1;  // one stage on 5 devices: 5 does not divide 12 micro-batches
  r.devices = 5;
  EXPECT_ERROR_MENTIONS("into at most 1 stages uses exactly 5 devices with replica counts that divide the step's 12",
                        partition_antichain(r));
}

// Plan files of format 1 split each micro-batch over a stage's replicas: with G replicas everywhere
// they are read as the same work, G x their micro-batches; with unequal replicas they are refused.
TEST(ReplicaPlanFiles, Format1IsReadAsTheSameWorkOrRefused) {
  const Profile profile = fixtures::chain_profile({.nodes = 4});
  const Plan plan = fixtures::chain_plan(profile, 2, 8, 4, 2);
  nlohmann::json json = plan_to_json(plan, profile);
  EXPECT_EQ(json.at("format"), "baton.plan/2");
  EXPECT_EQ(plan_from_json(json, profile, "new.json").micro_batches, 4);
  json["format"] = "baton.plan/1";
  json["micro_batches"] = 2;  // two micro-batches of 4 samples, 2 per replica
  const Plan old = plan_from_json(json, profile, "old.json");
  EXPECT_EQ(old.micro_batches, 4);
  EXPECT_DOUBLE_EQ(old.micro_batch_size(), 2.0);
  json["stages"][1]["replicas"] = 1;
  json["stages"][1]["devices"] = {1};
  EXPECT_ERROR_MENTIONS("unequal replicas", plan_from_json(json, profile, "old.json"));
}

}  // namespace
}  // namespace baton::parallel
