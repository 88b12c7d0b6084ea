// Cut states of the antichain partitioner: exactly the DAG's down-sets (against every subset of
// random DAGs), the diamond's states and antichains, and too many states as an error.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "parallel/plan/antichain.h"
#include "runtime/core/error.h"
#include "tests/parallel/plan/dag_fixtures.h"

namespace baton::parallel {
namespace {

using dag_fixtures::make_profile;
using dag_fixtures::random_dag;

bool is_down_set(const Profile& p, const std::vector<char>& in) {
  for (int n = 0; n < p.num_nodes(); ++n) {
    if (!in[n]) continue;
    for (int v : p.nodes[n].inputs) {
      if (p.values[v].producer >= 0 && !in[p.values[v].producer]) return false;
    }
  }
  return true;
}

TEST(AntichainStates, AreExactlyTheDownSets) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 12)(rng);
    const Profile p = random_dag(n, rng);
    const CutStates states = CutStates::antichains(p);
    int down_sets = 0;
    for (int mask = 0; mask < (1 << n); ++mask) {
      std::vector<char> in(n);
      std::vector<int> nodes;
      for (int k = 0; k < n; ++k) {
        in[k] = static_cast<char>((mask >> k) & 1);
        if (in[k]) nodes.push_back(k);
      }
      const bool down = is_down_set(p, in);
      down_sets += down ? 1 : 0;
      EXPECT_EQ(states.find(nodes) >= 0, down) << "trial " << trial << " mask " << mask;
    }
    ASSERT_EQ(states.num_states(), down_sets) << "trial " << trial;
    EXPECT_EQ(states.size(states.empty_state()), 0);
    EXPECT_EQ(states.size(states.full_state()), n);
    for (int j = 0; j < states.num_states(); ++j) {
      if (j > 0) {
        EXPECT_LE(states.size(j - 1), states.size(j));
      }
      for (int i = 0; i < states.num_states(); ++i) {
        bool subset = states.size(i) < states.size(j);
        for (int k = 0; k < n && subset; ++k) subset = !states.contains(i, k) || states.contains(j, k);
        EXPECT_EQ(states.nested(i, j), subset);
        if (subset) {
          EXPECT_LT(i, j);
        }
      }
    }
  }
}

TEST(AntichainStates, DiamondHasSixStatesAndTheirAntichains) {
  std::mt19937 rng(1);
  // a -> b -> d, a -> c -> d
  const Profile p = make_profile({{-1}, {0}, {0}, {1, 2}}, rng);
  const CutStates states = CutStates::antichains(p);
  EXPECT_EQ(states.num_states(), 6);  // {}, {a}, {a,b}, {a,c}, {a,b,c}, all
  const int ab = states.find({0, 1});
  ASSERT_GE(ab, 0);
  EXPECT_EQ(states.antichain(ab), (std::vector<int>{1}));
  EXPECT_EQ(states.augmented_antichain(ab), (std::vector<int>{0, 1}));  // a still feeds c
  EXPECT_EQ(states.find({0, 3}), -1);                                   // not a down-set
  const int abc = states.find({0, 1, 2});
  EXPECT_EQ(states.antichain(abc), (std::vector<int>{1, 2}));
  EXPECT_EQ(states.stage_nodes(ab, states.full_state()), (std::vector<int>{2, 3}));
  EXPECT_EQ(CutStates::prefixes(p).num_states(), 5);
}

TEST(AntichainStates, TooManyStatesIsAnError) {
  std::mt19937 rng(2);
  std::vector<std::vector<int>> inputs;
  for (int k = 0; k < 20; ++k) inputs.push_back({-1});  // 20 independent nodes: 2^20 down-sets
  const Profile p = make_profile(inputs, rng);
  try {
    CutStates::antichains(p, 1000);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("more than 1000 cut states"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace baton::parallel
