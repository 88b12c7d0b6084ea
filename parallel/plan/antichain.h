// Cut states of a profiled DAG (PipeDream's antichain DAG): the down-sets of the node DAG — sets closed
// under predecessors, each named by its antichain of maximal nodes — that the pipeline may be cut at.
#pragma once

#include <cstdint>
#include <vector>

#include "parallel/plan/profile.h"

namespace baton::parallel {

// A pipeline of S stages is a chain of S + 1 nested states, empty to full; stage s holds the nodes of
// state s + 1 minus state s. Because every state is a down-set, each stage is convex and no value
// ever flows from a later stage to an earlier one, however the DAG branches and joins.
class CutStates {
 public:
  static constexpr int kDefaultMaxStates = 6000;

  // Every down-set: starting from the empty set, repeatedly add one node whose producers are all
  // inside (PipeDream's next-antichain step), deduplicated. A ResNet has a handful per block (the
  // product of its branches' prefix counts). More than `max_states` is an error that names the count.
  static CutStates antichains(const Profile& profile, int max_states = kDefaultMaxStates);
  // The N + 1 prefixes of the topological order: the contiguous splits of the block partitioner.
  static CutStates prefixes(const Profile& profile);

  int num_states() const { return static_cast<int>(sizes_.size()); }
  int num_nodes() const { return num_nodes_; }
  int empty_state() const { return 0; }
  int full_state() const { return num_states() - 1; }
  // States are ordered by size, so every state comes after all the states nested inside it.
  int size(int state) const { return sizes_[state]; }
  bool contains(int state, int node) const {
    return ((bits_[static_cast<size_t>(state) * words_ + node / 64] >> (node % 64)) & 1u) != 0;
  }
  // `inner` strictly inside `outer`.
  bool nested(int inner, int outer) const;
  // The states strictly inside `state`, ascending: where a stage ending at `state` may start.
  const std::vector<int>& inner_states(int state) const { return inner_[state]; }
  // Nodes of `outer` not in `inner`, ascending (the stage between two nested states).
  std::vector<int> stage_nodes(int inner, int outer) const;
  // The maximal nodes of the state (no consumer inside it): the antichain that names it.
  std::vector<int> antichain(int state) const;
  // PipeDream's augmented antichain: the antichain plus the nodes inside whose values are read
  // outside — every node the cut at this state separates from a consumer.
  std::vector<int> augmented_antichain(int state) const;
  // The state holding exactly these nodes (ascending or not), or -1.
  int find(const std::vector<int>& nodes) const;

 private:
  explicit CutStates(const Profile& profile);
  void add_state(const std::vector<uint64_t>& bits, int size);
  void link_inner_states();

  int num_nodes_ = 0;
  size_t words_ = 0;            // 64-bit words per state
  std::vector<uint64_t> bits_;  // num_states x words_, row-major
  std::vector<int> sizes_;
  std::vector<std::vector<int>> inner_;
  std::vector<std::vector<int>> producers_;  // per node: the nodes whose values it reads
  std::vector<std::vector<int>> consumers_;  // per node: the nodes reading its values
};

}  // namespace baton::parallel
