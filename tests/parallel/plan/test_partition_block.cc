// The block partitioner against brute force over every contiguous split, with and without a memory cap.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "parallel/plan/cost_model.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/stage_dp.h"
#include "runtime/core/error.h"
#include "tests/parallel/plan/dag_fixtures.h"
#include "tests/parallel/plan/partition_brute_force.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using dag_fixtures::brute_force_block;
using dag_fixtures::random_chain;
using dag_fixtures::request_on;
using dag_fixtures::test_cluster;

// A random request for a chain of up to 12 nodes and up to 5 stages (devices on two machines, so
// links differ between stages).
PartitionRequest random_request(const Profile& profile, const Cluster& cluster, std::mt19937& rng) {
  const int n = profile.num_nodes();
  PartitionRequest r = request_on(profile, cluster, std::uniform_int_distribution<int>(1, std::min(5, n))(rng));
  r.replicas = std::uniform_int_distribution<int>(1, 2)(rng);
  r.micro_batches = r.replicas << std::uniform_int_distribution<int>(0, 2)(rng);  // a multiple of the replicas
  r.batch = r.micro_batches * r.replicas * (1 << std::uniform_int_distribution<int>(0, 3)(rng));
  const int kind = std::uniform_int_distribution<int>(0, 2)(rng);
  r.schedule = kind == 0 ? ScheduleKind::gpipe : ScheduleKind::one_f_one_b;
  if (kind == 2 && r.stages % 2 == 0) {
    r.schedule = ScheduleKind::interleaved;
    r.chunks_per_device = 2;
  }
  return r;
}

void expect_contiguous(const Plan& plan, int n) {
  int next = 0;
  for (const Stage& s : plan.stages) {
    for (int node : s.nodes) EXPECT_EQ(node, next++);
  }
  EXPECT_EQ(next, n);
}

void expect_within_cap(const PartitionRequest& r, const Plan& plan) {
  for (int s = 0; s < plan.num_stages(); ++s) {
    const StageMemory m = stage_memory(*r.profile, plan.stages[s].nodes, plan.micro_batch_size(),
                                       in_flight_bound(r, s, plan.num_stages(), plan.stages[s].replicas));
    EXPECT_LE(static_cast<double>(m.total()), memory_cap_bytes(r)) << "stage " << s;
  }
}

TEST(BlockPartitioner, MatchesBruteForceOnRandomChains) {
  std::mt19937 rng(7);
  const Cluster cluster = test_cluster(16, /*two_nodes=*/true);
  for (int trial = 0; trial < 150; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 12)(rng);
    const Profile profile = random_chain(n, rng);
    const PartitionRequest r = random_request(profile, cluster, rng);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << n << " nodes, " << r.stages << " stages x "
                                      << r.replicas << " replicas, batch " << r.batch << " in " << r.micro_batches);
    const Plan plan = partition_block(r);
    const auto brute = brute_force_block(r);
    EXPECT_EQ(plan.partitioner, "block");
    EXPECT_EQ(plan.num_stages(), r.stages);
    EXPECT_EQ(plan.batch, r.batch);
    EXPECT_EQ(plan.micro_batches, r.micro_batches);
    EXPECT_EQ(plan.chunks_per_device, r.chunks_per_device);
    for (const Stage& s : plan.stages) EXPECT_EQ(s.replicas, r.replicas);
    expect_contiguous(plan, n);
    EXPECT_NO_THROW(validate_plan(plan, profile));
    EXPECT_NEAR(plan_bottleneck_ms(r, plan), brute.best_ms, 1e-9 * brute.best_ms);
  }
}

TEST(BlockPartitioner, MatchesBruteForceUnderAMemoryCap) {
  std::mt19937 rng(11);
  const Cluster cluster = test_cluster(16, /*two_nodes=*/true);
  int binding = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int n = std::uniform_int_distribution<int>(2, 12)(rng);
    const Profile profile = random_chain(n, rng);
    PartitionRequest r = random_request(profile, cluster, rng);
    const auto open = brute_force_block(r);
    // A cap between the smallest and the largest peak any split reaches: some splits no longer fit.
    r.memory_cap_bytes =
        open.min_peak + std::uniform_real_distribution<double>(0, 0.6)(rng) * (open.max_peak - open.min_peak);
    const auto capped = brute_force_block(r);
    binding += capped.over_cap > 0 && capped.best_ms > open.best_ms ? 1 : 0;
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << n << " nodes, " << r.stages << " stages, cap "
                                      << r.memory_cap_bytes);
    const Plan plan = partition_block(r);
    expect_within_cap(r, plan);
    EXPECT_NEAR(plan_bottleneck_ms(r, plan), capped.best_ms, 1e-9 * capped.best_ms);
  }
  EXPECT_GT(binding, 10) << "the caps should change the optimum in a good share of the trials";
}

TEST(BlockPartitioner, CapNoSplitMeetsIsAnErrorNamingCapAndPeak) {
  std::mt19937 rng(3);
  const Cluster cluster = test_cluster(8);
  const Profile profile = random_chain(9, rng);
  PartitionRequest r = request_on(profile, cluster, 3);
  r.batch = 16;
  r.micro_batches = 4;
  const auto open = brute_force_block(r);
  r.memory_cap_bytes = open.min_peak - 1;
  const std::string msg = baton::testing::error_message([&] { partition_block(r); });
  EXPECT_NE(msg.find("memory cap"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(static_cast<int64_t>(r.memory_cap_bytes)) + " bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(static_cast<int64_t>(open.min_peak)) + " bytes"), std::string::npos) << msg;
  r.memory_cap_bytes = open.min_peak;  // exactly the smallest peak: feasible
  const Plan plan = partition_block(r);
  expect_within_cap(r, plan);
}

TEST(BlockPartitioner, MoreStagesThanNodesIsAnError) {
  std::mt19937 rng(5);
  const Cluster cluster = test_cluster(8);
  const Profile profile = random_chain(3, rng);
  PartitionRequest r = request_on(profile, cluster, 4);
  EXPECT_ERROR_MENTIONS("4 stages for a model of 3 nodes", partition_block(r));
  r.stages = 3;
  const Plan plan = partition_block(r);
  EXPECT_EQ(plan.num_stages(), 3);
  for (const Stage& s : plan.stages) EXPECT_EQ(s.nodes.size(), 1u);
}

TEST(BlockPartitioner, BalancesALongChainBetterThanUniform) {
  std::mt19937 rng(9);
  const Cluster cluster = test_cluster(8);
  const Profile profile = random_chain(300, rng);
  PartitionRequest r = request_on(profile, cluster, 8);
  r.batch = 64;
  r.micro_batches = 8;
  const Plan block = partition_block(r);
  const Plan uniform = partition_uniform(r);
  EXPECT_LE(plan_bottleneck_ms(r, block), plan_bottleneck_ms(r, uniform) * (1 + 1e-12));
  expect_contiguous(block, 300);
}

}  // namespace
}  // namespace baton::parallel
