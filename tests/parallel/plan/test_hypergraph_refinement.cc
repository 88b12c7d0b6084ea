// The hypergraph partitioner's parts and its report: refinement only improves ordered splits within
// the bound, coarsening keeps every level acyclic and projections keep the cost, and
// partition_quality measures any plan's balance and bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "parallel/plan/hypergraph.h"
#include "parallel/plan/partition_quality.h"
#include "tests/parallel/plan/hypergraph_test_util.h"

namespace baton::parallel {
namespace {

using testing::DagSpec;

// Refinement alone: from the contiguous split of index order it only improves, stays ordered and
// within the bound, and finds the diamond's optimum that no contiguous split of index order has.
TEST(HypergraphRefinement, ImprovesOrderedSplitsWithinTheBound) {
  DagSpec spec;
  spec.ms = {1, 1, 1, 1, 1, 1};
  spec.inputs = {{-1}, {0}, {1}, {1}, {2, 3}, {4}};
  spec.bytes = {500, 2000, 1000000, 3000, 700, 10};
  const Hypergraph diamond = hypergraph_from_profile(testing::make_profile(spec), 1, 1);
  std::vector<int> order = {0, 1, 2, 3, 4, 5};
  std::vector<int> part = best_ordered_split(diamond, order, 2, 3.3).value();
  EXPECT_EQ(connectivity_cost(diamond, part, 2), 1002000);
  std::mt19937 rng(1);
  EXPECT_EQ(refine_partition(diamond, part, 2, 3.3, rng), 5000);
  EXPECT_EQ(part, (std::vector<int>{0, 0, 1, 0, 1, 1}));

  std::mt19937 dags(17);
  double gained = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 30 + static_cast<int>(dags() % 200);
    const Hypergraph graph = hypergraph_from_profile(testing::make_profile(testing::random_dag(n, dags)), 1, 1);
    order.resize(n);
    std::iota(order.begin(), order.end(), 0);
    for (int k : {2, 4, 7}) {
      const double bound = std::max(1.15 * graph.total_weight() / k, min_max_split_load(graph, order, k));
      part = best_ordered_split(graph, order, k, bound).value();
      const double before = connectivity_cost(graph, part, k);
      const double after = refine_partition(graph, part, k, bound, rng);
      EXPECT_TRUE(is_ordered_partition(graph, part, k));
      EXPECT_DOUBLE_EQ(after, connectivity_cost(graph, part, k));
      EXPECT_LE(after, before);
      const std::vector<double> loads = part_loads(graph, part, k);
      EXPECT_LE(*std::max_element(loads.begin(), loads.end()), bound * (1 + 1e-9));
      gained += before - after;
    }
  }
  EXPECT_GT(gained, 0);
}

// Coarsening keeps every level acyclic (contract would throw), keeps the total weight, shrinks, and a
// coarse partition projected to the finer level keeps its connectivity - 1.
TEST(HypergraphCoarsening, LevelsAreAcyclicAndProjectionsKeepTheCost) {
  std::mt19937 rng(23);
  const Hypergraph graph = hypergraph_from_profile(testing::make_profile(testing::random_dag(300, rng)), 1, 1);
  const std::vector<CoarseLevel> levels = coarsen(graph, 24, graph.total_weight() / 20, rng);
  ASSERT_FALSE(levels.empty());
  const Hypergraph* finer = &graph;
  for (const CoarseLevel& level : levels) {
    EXPECT_LT(level.graph.num_vertices(), finer->num_vertices());
    EXPECT_NEAR(level.graph.total_weight(), graph.total_weight(), 1e-9 * graph.total_weight());
    for (double w : level.graph.vertex_weight) EXPECT_LE(w, std::max(graph.total_weight() / 20, 2.0 * 20));
    std::vector<int> order(level.graph.num_vertices());
    std::iota(order.begin(), order.end(), 0);
    const std::vector<int> part = best_ordered_split(level.graph, order, 3, graph.total_weight()).value();
    std::vector<int> projected(finer->num_vertices());
    for (int v = 0; v < finer->num_vertices(); ++v) projected[v] = part[level.fine_to_coarse[v]];
    EXPECT_TRUE(is_ordered_partition(*finer, projected, 3));
    EXPECT_DOUBLE_EQ(connectivity_cost(*finer, projected, 3), connectivity_cost(level.graph, part, 3));
    finer = &level.graph;
  }
  std::printf("[ hypergraph ] coarsened 300 vertices to %d in %zu levels\n", finer->num_vertices(), levels.size());
}

TEST(PartitionQuality, BalanceAndBytesOfAnyPlan) {
  // n0 -> n1 -> n2 and a skip n0 -> n2; split {n0} | {n1} | {n2}: n0's output reaches two stages.
  DagSpec spec;
  spec.ms = {3, 1, 2};
  spec.inputs = {{-1}, {0}, {0, 1}};
  spec.bytes = {100, 40, 1};
  const Profile profile = testing::make_profile(spec);
  Plan plan;
  plan.batch = 32;
  plan.micro_batches = 4;
  plan.stages = {Stage{{0}, 1, {0}}, Stage{{1}, 1, {1}}, Stage{{2}, 1, {2}}};
  const PartitionQuality q = partition_quality(plan, profile);
  EXPECT_EQ(q.comm_bytes, (100 * 2 + 40) * 8);
  EXPECT_NEAR(q.max_stage_ms, 3 * 8, 1e-9);
  EXPECT_NEAR(q.balance_ratio, 3.0 / 2.0, 1e-12);
  plan.stages = {Stage{{0, 1}, 1, {0}}, Stage{{2}, 1, {1}}};
  EXPECT_EQ(partition_quality(plan, profile).comm_bytes, (100 + 40) * 8);
}

}  // namespace
}  // namespace baton::parallel
