// The antichain partitioner: equals exhaustive search over ordered stage assignments (equal and
// free replication), equals block on chains, and handles ResNet-sized graphs (its cut states:
// test_antichain_states.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <string>

#include "models/model_registry.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/antichain.h"
#include "parallel/plan/cluster.h"
#include "parallel/plan/cost_model.h"
#include "parallel/plan/device_spec.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/stage_dp.h"
#include "runtime/core/error.h"
#include "tests/parallel/plan/dag_fixtures.h"
#include "tests/parallel/plan/partition_brute_force.h"

namespace baton::parallel {
namespace {

using dag_fixtures::brute_force_dag;
using dag_fixtures::make_profile;
using dag_fixtures::random_chain;
using dag_fixtures::random_dag;
using dag_fixtures::request_on;
using dag_fixtures::resnet_like;
using dag_fixtures::test_cluster;

PartitionRequest request_for(const Profile& p, const Cluster& c, int stages, int replicas, int batch, int micro) {
  PartitionRequest r = request_on(p, c, stages);
  r.replicas = replicas;
  r.batch = batch;
  r.micro_batches = micro;
  return r;
}

TEST(AntichainPartitioner, MatchesExhaustiveSearchOnRandomDags) {
  std::mt19937 rng(33);
  const Cluster cluster = test_cluster(16, /*two_nodes=*/true);
  int capped = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const int n = std::uniform_int_distribution<int>(2, 9)(rng);
    const Profile p = random_dag(n, rng);
    const int stages = std::uniform_int_distribution<int>(1, std::min(4, n))(rng);
    const int replicas = std::uniform_int_distribution<int>(1, 2)(rng);
    const int micro = 1 << std::uniform_int_distribution<int>(0, 2)(rng);
    PartitionRequest r = request_for(p, cluster, stages, replicas, micro * replicas * 4, micro * replicas);
    r.schedule = trial % 2 == 0 ? ScheduleKind::gpipe : ScheduleKind::one_f_one_b;
    if (trial % 3 == 0) {
      const auto open = brute_force_dag(r);
      r.memory_cap_bytes = open.min_peak + 0.4 * (open.max_peak - open.min_peak);
      ++capped;
    }
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << n << " nodes, " << stages << " stages x "
                                      << replicas << ", cap " << r.memory_cap_bytes);
    const auto brute = brute_force_dag(r);
    const Plan plan = partition_antichain(r);
    EXPECT_EQ(plan.partitioner, "antichain");
    EXPECT_EQ(plan.num_stages(), stages);
    for (const Stage& s : plan.stages) EXPECT_EQ(s.replicas, replicas);
    EXPECT_NO_THROW(validate_plan(plan, p));
    EXPECT_NEAR(plan_bottleneck_ms(r, plan), brute.best_ms, 1e-9 * brute.best_ms);
  }
  EXPECT_GT(capped, 20);
}

TEST(AntichainPartitioner, MatchesExhaustiveSearchWithFreeReplication) {
  std::mt19937 rng(44);
  const Cluster cluster = test_cluster(4);
  int replicated = 0;
  for (int trial = 0; trial < 50; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 7)(rng);
    const Profile p = random_dag(n, rng);
    const int micro = std::vector<int>{1, 2, 4, 6}[std::uniform_int_distribution<int>(0, 3)(rng)];
    const int micro_batch = 1 << std::uniform_int_distribution<int>(0, 2)(rng);
    PartitionRequest r = request_for(p, cluster, std::uniform_int_distribution<int>(1, std::min(3, n))(rng), 1,
                                     micro * micro_batch, micro);
    r.free_replication = true;
    r.devices = std::uniform_int_distribution<int>(1, 4)(rng);
    r.schedule = trial % 2 == 0 ? ScheduleKind::gpipe : ScheduleKind::one_f_one_b;
    if (trial % 4 == 0) {
      const auto open = brute_force_dag(r);
      r.memory_cap_bytes = open.min_peak + 0.3 * (open.max_peak - open.min_peak);
    }
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << n << " nodes, <= " << r.stages
                                      << " stages, <= " << r.devices << " devices, micro-batch " << micro_batch);
    const auto brute = brute_force_dag(r);
    const Plan plan = partition_antichain(r);
    EXPECT_LE(plan.num_stages(), r.stages);
    EXPECT_LE(plan.num_devices(), r.devices);
    EXPECT_NO_THROW(validate_plan(plan, p));
    for (const Stage& s : plan.stages) replicated += s.replicas > 1 ? 1 : 0;
    EXPECT_NEAR(plan_bottleneck_ms(r, plan), brute.best_ms, 1e-9 * brute.best_ms);
  }
  EXPECT_GT(replicated, 5) << "replication should win in some trials";
}

TEST(AntichainPartitioner, FreeReplicationCountsInFlightForTheChosenStageCount) {
  // Under 1F1B the first of two stages holds two micro-batches, a single stage one: with this cap
  // only the single stage fits, which a memory check using the two-stage count would miss.
  std::mt19937 rng(46);
  Profile p = make_profile({{-1}, {0}}, rng);
  for (ProfiledNode& n : p.nodes) {
    n.param_bytes = 0;
    n.workspace_bytes = 0;
    n.saved_bytes_per_sample = 1'000;
  }
  p.nodes[0].saved_bytes_per_sample = 100'000'000;
  const Cluster cluster = test_cluster(2);
  PartitionRequest r = request_for(p, cluster, 2, 1, 4, 4);
  r.free_replication = true;
  r.devices = 2;
  r.memory_cap_bytes = 150'000'000;
  const Plan plan = partition_antichain(r);
  EXPECT_EQ(plan.num_stages(), 1);
  const auto brute = brute_force_dag(r);
  EXPECT_NEAR(plan_bottleneck_ms(r, plan), brute.best_ms, 1e-9 * brute.best_ms);
}

TEST(AntichainPartitioner, FreeReplicationNeverLosesToTheEqualLayout) {
  std::mt19937 rng(45);
  const Cluster cluster = test_cluster(8);
  for (int trial = 0; trial < 20; ++trial) {
    const Profile p = random_dag(std::uniform_int_distribution<int>(4, 30)(rng), rng, 0, false);
    PartitionRequest equal = request_for(p, cluster, 2, 2, 32, 4);
    PartitionRequest free = equal;
    free.free_replication = true;
    free.devices = 4;
    const double e = plan_bottleneck_ms(equal, partition_antichain(equal));
    const double f = plan_bottleneck_ms(free, partition_antichain(free));
    EXPECT_LE(f, e * (1 + 1e-12)) << "trial " << trial;
  }
}

TEST(AntichainPartitioner, EqualsBlockOnChainsAndNeverLosesOnDags) {
  std::mt19937 rng(55);
  const Cluster cluster = test_cluster(8);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 40)(rng);
    const int stages = std::uniform_int_distribution<int>(1, std::min(6, n))(rng);
    const Profile chain = random_chain(n, rng);
    const PartitionRequest r = request_for(chain, cluster, stages, 1, 16, 4);
    const double block = plan_bottleneck_ms(r, partition_block(r));
    EXPECT_NEAR(plan_bottleneck_ms(r, partition_antichain(r)), block, 1e-9 * block) << "trial " << trial;

    const Profile dag = random_dag(n, rng, 0, false);
    const PartitionRequest d = request_for(dag, cluster, stages, 1, 16, 4);
    EXPECT_LE(plan_bottleneck_ms(d, partition_antichain(d)), plan_bottleneck_ms(d, partition_block(d)) * (1 + 1e-12))
        << "trial " << trial;
  }
}

TEST(AntichainPartitioner, IsRegisteredByNameWithBlock) {
  std::mt19937 rng(67);
  const Cluster cluster = test_cluster(8);
  const Profile p = random_dag(12, rng, 0, false);
  const PartitionRequest r = request_for(p, cluster, 3, 2, 16, 4);
  const auto names = partitioner_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "antichain"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "block"), names.end());
  const Plan a = partition("antichain", r), b = partition("block", r);
  EXPECT_EQ(a.partitioner, "antichain");
  EXPECT_EQ(b.partitioner, "block");
  EXPECT_DOUBLE_EQ(plan_bottleneck_ms(r, a), plan_bottleneck_ms(r, partition_antichain(r)));
  EXPECT_DOUBLE_EQ(plan_bottleneck_ms(r, b), plan_bottleneck_ms(r, partition_block(r)));
}

TEST(AntichainPartitioner, ErrorsNameTheProblem) {
  std::mt19937 rng(66);
  const Cluster cluster = test_cluster(8);
  const Profile p = random_dag(5, rng);
  PartitionRequest r = request_for(p, cluster, 6, 1, 8, 2);
  try {
    partition_antichain(r);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("6 stages for a model of 5 nodes"), std::string::npos) << e.message();
  }
  r.stages = 2;
  r.memory_cap_bytes = brute_force_dag(r).min_peak * 0.999;
  try {
    partition_antichain(r);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("memory cap"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(std::to_string(static_cast<int64_t>(r.memory_cap_bytes))), std::string::npos)
        << e.message();
  }
}

TEST(AntichainPartitioner, PartitionsAResNet152SizedGraph) {
  std::mt19937 rng(77);
  const Cluster cluster = test_cluster(8);
  // 50 bottleneck-like blocks (8-node main branch), a projection skip every 12 blocks: ~560 nodes.
  const Profile p = resnet_like(50, 8, 12, rng);
  auto start = std::chrono::steady_clock::now();
  const CutStates states = CutStates::antichains(p);
  const double states_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(states.num_states(), 3 * p.num_nodes());

  PartitionRequest r = request_for(p, cluster, 8, 1, 64, 8);
  start = std::chrono::steady_clock::now();
  const Plan equal = partition_antichain(r);
  const double equal_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double equal_ms = plan_bottleneck_ms(r, equal);
  EXPECT_LE(equal_ms, plan_bottleneck_ms(r, partition_block(r)) * (1 + 1e-12));

  PartitionRequest f = r;
  f.free_replication = true;
  f.devices = 8;
  start = std::chrono::steady_clock::now();
  const Plan free = partition_antichain(f);
  const double free_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LE(plan_bottleneck_ms(f, free), equal_ms * (1 + 1e-12));
  std::cout << "[ resnet-like ] " << p.num_nodes() << " nodes, " << states.num_states() << " cut states (" << states_s
            << " s); 8 stages: " << equal_s << " s; free replication over 8 devices: " << free_s << " s, "
            << free.num_stages() << " stages\n";
}

TEST(AntichainPartitioner, PartitionsTheAnalyticProfilesOfResNet50And152) {
  const Cluster cluster = cluster_by_name("h200-nvlink-8");
  for (const char* name : {"resnet50", "resnet152"}) {
    SCOPED_TRACE(name);
    const Profile p =
        analytic_profile(models::build_model(name, models::default_options(name)), name, device_spec_by_name("h200"));
    auto seconds_since = [](auto start) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    const CutStates states = CutStates::antichains(p);
    PartitionRequest r = request_for(p, cluster, 4, 2, 256, 8);
    auto start = std::chrono::steady_clock::now();
    const Plan equal = partition_antichain(r);
    const double equal_s = seconds_since(start);
    PartitionRequest f = request_for(p, cluster, 8, 1, 256, 8);
    f.free_replication = true;
    f.devices = 8;
    start = std::chrono::steady_clock::now();
    const Plan free = partition_antichain(f);
    const double free_s = seconds_since(start);
    EXPECT_NO_THROW(validate_plan(equal, p));
    EXPECT_NO_THROW(validate_plan(free, p));
    EXPECT_EQ(equal.num_devices(), 8);
    EXPECT_LE(free.num_devices(), 8);
    EXPECT_LE(plan_bottleneck_ms(r, equal), plan_bottleneck_ms(r, partition_block(r)) * (1 + 1e-12));
    EXPECT_LE(plan_bottleneck_ms(r, equal), plan_bottleneck_ms(r, partition_uniform(r)) * (1 + 1e-12));
    std::cout << "[ " << name << " ] " << p.num_nodes() << " nodes, " << states.num_states()
              << " cut states; 4 stages x 2: " << equal_s << " s; free replication over 8 devices ("
              << free.num_stages() << " stages, " << free.num_devices() << " devices): " << free_s << " s\n";
  }
}

}  // namespace
}  // namespace baton::parallel
