// The partitioners' period (stage_period_ms) against the simulated step, on random profiles and plans:
// the simulated step T of a plan of S stages and M micro-batches whose slowest period is P satisfies
// M x P <= T (a bound: the slowest resource serves M micro-batches and the per-step tail) and, as
// checked here, T <= (M + 2(S - 1)) x P (filling and draining the pipeline, both directions). Plans
// whose bounds do not overlap are therefore ordered alike, and the partitioner's optimum is within
// (M + 2(S - 1)) / M of the best simulated step of the plans it compares.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "dag_fixtures.h"
#include "parallel/plan/cost_model.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/planner.h"
#include "parallel/plan/simulator.h"
#include "parallel/plan/stage_dp.h"

namespace baton::parallel {
namespace {

struct PlanSetting {
  int stages = 1;
  int replicas = 1;
  int micro_batches = 1;
  ScheduleKind kind = ScheduleKind::one_f_one_b;
};

struct Priced {
  double period_ms = 0;  // what the partitioner minimises
  double step_ms = 0;    // what the simulator predicts
};

PartitionRequest order_request(const Profile& profile, const Cluster& cluster, const PlanSetting& s) {
  PartitionRequest r = dag_fixtures::request_on(profile, cluster, s.stages);
  r.replicas = s.replicas;
  r.batch = s.micro_batches * s.replicas * 4;
  r.micro_batches = s.micro_batches * s.replicas;  // the step's: M per replica
  r.schedule = s.kind;
  return r;
}

// Contiguous stages ending before each of `cuts` (ascending, the last = the node count).
Plan plan_from_cuts(const PartitionRequest& r, const std::vector<int>& cuts) {
  Plan plan;
  plan.model = r.profile->model;
  plan.partitioner = "cuts";
  plan.batch = r.batch;
  plan.micro_batches = r.micro_batches;
  int first = 0;
  for (const int cut : cuts) {
    Stage stage;
    for (int n = first; n < cut; ++n) stage.nodes.push_back(n);
    stage.replicas = r.replicas;
    plan.stages.push_back(std::move(stage));
    first = cut;
  }
  assign_devices(plan);
  return plan;
}

Priced price(const PartitionRequest& r, const Plan& plan) {
  SimulationOptions options;
  options.record_trace = false;
  const Schedule schedule = plan_schedule(plan, *r.profile, r.schedule);
  return {plan_bottleneck_ms(r, plan), simulate(plan, schedule, *r.profile, *r.cluster, options).step_ms};
}

std::vector<int> random_cuts(int nodes, int stages, std::mt19937& rng) {
  std::vector<int> positions(nodes - 1);
  for (int i = 0; i < nodes - 1; ++i) positions[i] = i + 1;
  std::shuffle(positions.begin(), positions.end(), rng);
  std::vector<int> cuts(positions.begin(), positions.begin() + (stages - 1));
  std::sort(cuts.begin(), cuts.end());
  cuts.push_back(nodes);
  return cuts;
}

std::vector<PlanSetting> order_settings() {
  std::vector<PlanSetting> out;
  for (const int stages : {1, 2, 3, 4}) {
    for (const int m : {1, 2, 4, 8, 16}) {
      for (const int replicas : {1, 2}) {
        for (const ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
          out.push_back({stages, replicas, m, kind});
        }
      }
    }
  }
  return out;
}

// The step's micro-batches and the bounds' factors: M_step P <= T <= (M_step + 2 r (S - 1)) P, each
// of the r replica groups running its M micro-batches through S stages.
double micro_batches_of_step(const PlanSetting& s) { return s.micro_batches * s.replicas; }
double upper_factor(const PlanSetting& s) { return micro_batches_of_step(s) + 2.0 * s.replicas * (s.stages - 1); }

TEST(CostModelOrder, SimulatedStepLiesWithinThePeriodBounds) {
  std::mt19937 rng(17);
  int plans = 0, pairs = 0, alike = 0, separated = 0;
  double worst_upper = 0;  // largest T / ((M + 2(S - 1)) P) with S > 1 (one stage: T = M P exactly)
  for (const PlanSetting& s : order_settings()) {
    const Cluster cluster = dag_fixtures::test_cluster(s.stages * s.replicas);
    for (int trial = 0; trial < 4; ++trial) {
      const Profile profile = trial % 2 == 0 ? dag_fixtures::random_chain(12, rng) : dag_fixtures::random_dag(12, rng);
      const PartitionRequest r = order_request(profile, cluster, s);
      std::vector<Priced> priced;
      for (int k = 0; k < 6; ++k) {
        const Priced p = price(r, plan_from_cuts(r, random_cuts(profile.num_nodes(), s.stages, rng)));
        ++plans;
        EXPECT_GE(p.step_ms, micro_batches_of_step(s) * p.period_ms * (1 - 1e-9))
            << "S=" << s.stages << " M=" << s.micro_batches << " r=" << s.replicas << " trial " << trial;
        EXPECT_LE(p.step_ms, upper_factor(s) * p.period_ms * (1 + 1e-9))
            << "S=" << s.stages << " M=" << s.micro_batches << " r=" << s.replicas << " trial " << trial;
        if (s.stages > 1) worst_upper = std::max(worst_upper, p.step_ms / (upper_factor(s) * p.period_ms));
        priced.push_back(p);
      }
      for (const Priced& a : priced) {
        for (const Priced& b : priced) {
          if (!(a.period_ms < b.period_ms)) continue;
          ++pairs;
          alike += a.step_ms <= b.step_ms ? 1 : 0;
          if (upper_factor(s) * a.period_ms < micro_batches_of_step(s) * b.period_ms) {
            ++separated;
            EXPECT_LT(a.step_ms, b.step_ms);
          }
        }
      }
    }
  }
  std::printf(
      "%d random plans: largest T / ((M + 2(S - 1)) P) over S > 1: %.3f; %d of %d pairs ordered alike by P and T, "
      "%d pairs separated by the bounds\n",
      plans, worst_upper, alike, pairs, separated);
}

// Every split of a chain into S contiguous stages: the block partitioner's optimum (the smallest
// period) is simulated within (M + 2(S - 1)) / M of the best simulated split.
TEST(CostModelOrder, PartitionersOptimumIsWithinTheBoundOfTheSimulatorsBest) {
  std::mt19937 rng(23);
  int cases = 0, same = 0;
  double worst = 1;
  for (const PlanSetting& s : order_settings()) {
    if (s.stages != 3) continue;
    const Cluster cluster = dag_fixtures::test_cluster(s.stages * s.replicas);
    for (int trial = 0; trial < 3; ++trial) {
      const Profile profile = dag_fixtures::random_chain(9, rng);
      const PartitionRequest r = order_request(profile, cluster, s);
      const Priced chosen = price(r, partition_block(r));
      double best = chosen.step_ms;
      for (int a = 1; a < profile.num_nodes(); ++a) {
        for (int b = a + 1; b < profile.num_nodes(); ++b) {
          const Priced p = price(r, plan_from_cuts(r, {a, b, profile.num_nodes()}));
          EXPECT_GE(p.period_ms, chosen.period_ms * (1 - 1e-12)) << "the partitioner missed a smaller period";
          best = std::min(best, p.step_ms);
        }
      }
      ++cases;
      same += chosen.step_ms <= best * (1 + 1e-12) ? 1 : 0;
      worst = std::max(worst, chosen.step_ms / best);
      EXPECT_LE(chosen.step_ms, best * upper_factor(s) / micro_batches_of_step(s) * (1 + 1e-9))
          << "M=" << s.micro_batches << " r=" << s.replicas << " trial " << trial;
    }
  }
  std::printf(
      "%d chains of 9 nodes in 3 stages: the partitioner's plan is the simulator's best in %d; at most %.3fx "
      "its step\n",
      cases, same, worst);
}

}  // namespace
}  // namespace baton::parallel
