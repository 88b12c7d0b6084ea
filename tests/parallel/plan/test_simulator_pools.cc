// Compute pools: devices sharing a node's cores (CPU virtual devices) have Cluster::concurrent_compute
// places; n computations on p places each progress at min(1, p / n) of their speed (the kernel
// time-slices the cores), so a stage whose replicas need more places runs longer.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "parallel/plan/planner.h"
#include "parallel/plan/simulator.h"
#include "parallel/plan/simulator_engine.h"
#include "tests/parallel/plan/simulator_fixtures.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

double pooled_step_ms(const Plan& plan, const Profile& profile, int concurrent) {
  Cluster cluster = fixtures::test_cluster(plan.num_stages() * plan.stages[0].replicas);
  cluster.set_concurrent_compute(concurrent);
  SimulationOptions options;
  options.free_communication = true;
  return simulate(plan, plan_schedule(plan, profile, ScheduleKind::gpipe), profile, cluster, options).step_ms;
}

TEST(SimulatorPools, StagesWaitForAPlaceOfTheirNode) {
  fixtures::ChainSpec spec;  // 1 ms forward, 2 ms backward per node and sample
  spec.nodes = 4;
  const Profile profile = fixtures::chain_profile(spec);
  for (const int m : {1, 2, 4, 8}) {
    const Plan plan = fixtures::chain_plan(profile, 4, m, m);  // 4 stages of one node, micro-batches of 1
    // Every device its own hardware (0), or as many places as stages: GPipe's (M + S - 1) x 3 ms.
    EXPECT_NEAR(pooled_step_ms(plan, profile, 0), (m + 3) * 3.0, 1e-9) << "M=" << m;
    EXPECT_NEAR(pooled_step_ms(plan, profile, 4), (m + 3) * 3.0, 1e-9) << "M=" << m;
    // One place: all 4 x M x 3 ms of work one after another.
    EXPECT_NEAR(pooled_step_ms(plan, profile, 1), 4 * m * 3.0, 1e-9) << "M=" << m;
    // Two places: no sooner than half the work, no later than the work in series.
    const double two = pooled_step_ms(plan, profile, 2);
    EXPECT_GE(two, 4 * m * 3.0 / 2 - 1e-9) << "M=" << m;
    EXPECT_GE(two, (m + 3) * 3.0 - 1e-9) << "M=" << m;
    EXPECT_LE(two, 4 * m * 3.0 + 1e-9) << "M=" << m;
    if (m > 1) {  // one micro-batch is in series anyway
      EXPECT_LT(two, 4 * m * 3.0) << "M=" << m;
    }
  }
}

TEST(SimulatorPools, ReplicasOnOneNodeTakeAPlaceEach) {
  fixtures::ChainSpec spec;
  spec.nodes = 2;
  const Profile profile = fixtures::chain_profile(spec);
  const Plan plan = fixtures::chain_plan(profile, 1, 8, 4, 2);  // one stage, 2 replicas of 2 micro-batches each
  const double own = pooled_step_ms(plan, profile, 0);
  EXPECT_NEAR(own, 4 * 2 * 3.0, 1e-9);
  EXPECT_NEAR(pooled_step_ms(plan, profile, 2), own, 1e-9);
  EXPECT_NEAR(pooled_step_ms(plan, profile, 1), 2 * own, 1e-9);  // both replicas on one place
}

// One stage of r replicas on r devices of one pool with `places` places, GPipe, one micro-batch each:
// every replica's forward, then its backward (1 and 2 ms of work).
sim::Timeline shared_pool_timeline(int replicas, int places) {
  const Schedule schedule = make_schedule(ScheduleKind::gpipe, 1, 1, replicas, {}, false, {replicas});
  sim::StageCosts stage;
  stage.fwd_ms = 1.0;
  stage.bwd_ms = 2.0;
  for (int k = 0; k < replicas; ++k) {
    stage.devices.push_back(k);
    stage.pools.push_back(0);
  }
  return sim::run_programs(schedule, {stage}, {{0}}, [](int64_t, int, int) { return 0.0; }, {places});
}

TEST(SimulatorPools, ComputationsShareThePlacesAsTheKernelSharesCores) {
  struct Case {
    int replicas, places;
    double forward_ends, backward_ends;  // every replica's, computing at min(1, places / replicas)
  };
  for (const Case c : {Case{2, 1, 2.0, 6.0}, Case{3, 2, 1.5, 4.5}, Case{2, 2, 1.0, 3.0}, Case{4, 1, 4.0, 12.0}}) {
    const sim::Timeline timeline = shared_pool_timeline(c.replicas, c.places);
    int forwards = 0, backwards = 0;
    for (const sim::Interval& i : timeline.intervals) {
      if (i.activity == sim::Activity::forward) {
        ++forwards;
        EXPECT_NEAR(i.start_ms, 0.0, 1e-12) << c.replicas << " on " << c.places;
        EXPECT_NEAR(i.end_ms, c.forward_ends, 1e-12) << c.replicas << " on " << c.places;
      } else if (i.activity == sim::Activity::backward) {
        ++backwards;
        EXPECT_NEAR(i.start_ms, c.forward_ends, 1e-12) << c.replicas << " on " << c.places;
        EXPECT_NEAR(i.end_ms, c.backward_ends, 1e-12) << c.replicas << " on " << c.places;
      }
    }
    EXPECT_EQ(forwards, c.replicas);
    EXPECT_EQ(backwards, c.replicas);
  }
}

TEST(SimulatorPools, ClusterFilesCarryTheCountAndRefuseANegativeOne) {
  Cluster c = fixtures::test_cluster(4);
  c.set_concurrent_compute(2);
  const nlohmann::json j = cluster_to_json(c);
  EXPECT_EQ(j.at("concurrent_compute"), 2);
  EXPECT_EQ(cluster_from_json(j, "c.json").concurrent_compute(), 2);
  EXPECT_FALSE(cluster_to_json(fixtures::test_cluster(4)).contains("concurrent_compute"));
  nlohmann::json bad = j;
  bad["concurrent_compute"] = -1;
  EXPECT_ERROR_MENTIONS("c.json: field 'concurrent_compute': expected an integer >= 0",
                        cluster_from_json(bad, "c.json"));
  EXPECT_ERROR_MENTIONS("concurrent_compute must be >= 0", c.set_concurrent_compute(-3));
}

}  // namespace
}  // namespace baton::parallel
