// Cut states (down-sets) of a profiled DAG, enumerated level by level as PipeDream's antichain DAG.
#include "parallel/plan/antichain.h"

#include <algorithm>
#include <bit>

#include "runtime/core/error.h"

namespace baton::parallel {

CutStates::CutStates(const Profile& profile)
    : num_nodes_(profile.num_nodes()),
      words_(static_cast<size_t>((profile.num_nodes() + 63) / 64)),
      producers_(profile.nodes.size()),
      consumers_(profile.nodes.size()) {
  for (int n = 0; n < num_nodes_; ++n) {
    for (int v : profile.nodes[n].inputs) {
      const int p = profile.values[v].producer;
      if (p < 0) continue;
      BATON_CHECK(p < n, "cut states: node '", profile.nodes[n].name, "' reads a value of a later node (", p,
                  "): the profile's nodes must be in topological order");
      producers_[n].push_back(p);
      consumers_[p].push_back(n);
    }
  }
  for (auto* lists : {&producers_, &consumers_}) {
    for (auto& list : *lists) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
  }
}

void CutStates::add_state(const std::vector<uint64_t>& bits, int size) {
  bits_.insert(bits_.end(), bits.begin(), bits.end());
  sizes_.push_back(size);
}

CutStates CutStates::antichains(const Profile& profile, int max_states) {
  CutStates states(profile);
  const int n = states.num_nodes_;
  const size_t words = states.words_;
  std::vector<std::vector<uint64_t>> level(1, std::vector<uint64_t>(words, 0));
  auto has = [](const std::vector<uint64_t>& bits, int node) { return ((bits[node / 64] >> (node % 64)) & 1u) != 0; };
  for (int size = 0;; ++size) {
    for (const auto& bits : level) states.add_state(bits, size);
    if (size == n) break;
    // Next level: add one node whose producers are all inside (a next antichain), then deduplicate.
    std::vector<std::vector<uint64_t>> next;
    for (const auto& bits : level) {
      for (int node = 0; node < n; ++node) {
        if (has(bits, node)) continue;
        const auto& prods = states.producers_[node];
        if (!std::all_of(prods.begin(), prods.end(), [&](int p) { return has(bits, p); })) continue;
        next.push_back(bits);
        next.back()[node / 64] |= uint64_t{1} << (node % 64);
      }
    }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    BATON_CHECK(states.num_states() + static_cast<int>(next.size()) <= max_states, "antichain: the DAG of '",
                profile.model, "' has more than ", max_states, " cut states (", states.num_states() + next.size(),
                " with ", size + 1, " of its ", n,
                " nodes placed): too many parallel branches; use the block partitioner or a coarser profile");
    level = std::move(next);
  }
  states.link_inner_states();
  return states;
}

CutStates CutStates::prefixes(const Profile& profile) {
  CutStates states(profile);
  std::vector<uint64_t> bits(states.words_, 0);
  states.add_state(bits, 0);
  for (int node = 0; node < states.num_nodes_; ++node) {
    bits[node / 64] |= uint64_t{1} << (node % 64);
    states.add_state(bits, node + 1);
  }
  states.link_inner_states();
  return states;
}

bool CutStates::nested(int inner, int outer) const {
  if (sizes_[inner] >= sizes_[outer]) return false;
  const uint64_t* a = &bits_[static_cast<size_t>(inner) * words_];
  const uint64_t* b = &bits_[static_cast<size_t>(outer) * words_];
  for (size_t w = 0; w < words_; ++w) {
    if ((a[w] & ~b[w]) != 0) return false;
  }
  return true;
}

void CutStates::link_inner_states() {
  inner_.assign(sizes_.size(), {});
  for (int j = 0; j < num_states(); ++j) {
    for (int i = 0; i < j; ++i) {
      if (nested(i, j)) inner_[j].push_back(i);
    }
  }
}

std::vector<int> CutStates::stage_nodes(int inner, int outer) const {
  std::vector<int> nodes;
  const uint64_t* a = &bits_[static_cast<size_t>(inner) * words_];
  const uint64_t* b = &bits_[static_cast<size_t>(outer) * words_];
  for (size_t w = 0; w < words_; ++w) {
    for (uint64_t diff = b[w] & ~a[w]; diff != 0; diff &= diff - 1) {
      nodes.push_back(static_cast<int>(w * 64) + std::countr_zero(diff));
    }
  }
  return nodes;
}

std::vector<int> CutStates::antichain(int state) const {
  std::vector<int> nodes;
  for (int n = 0; n < num_nodes_; ++n) {
    if (!contains(state, n)) continue;
    const auto& cons = consumers_[n];
    if (std::none_of(cons.begin(), cons.end(), [&](int c) { return contains(state, c); })) nodes.push_back(n);
  }
  return nodes;
}

std::vector<int> CutStates::augmented_antichain(int state) const {
  std::vector<int> nodes;
  for (int n = 0; n < num_nodes_; ++n) {
    if (!contains(state, n)) continue;
    const auto& cons = consumers_[n];
    const bool maximal = std::none_of(cons.begin(), cons.end(), [&](int c) { return contains(state, c); });
    const bool read_outside = std::any_of(cons.begin(), cons.end(), [&](int c) { return !contains(state, c); });
    if (maximal || read_outside) nodes.push_back(n);
  }
  return nodes;
}

int CutStates::find(const std::vector<int>& nodes) const {
  std::vector<uint64_t> bits(words_, 0);
  for (int n : nodes) bits[n / 64] |= uint64_t{1} << (n % 64);
  for (int s = 0; s < num_states(); ++s) {
    if (std::equal(bits.begin(), bits.end(), bits_.begin() + static_cast<std::ptrdiff_t>(s * words_))) return s;
  }
  return -1;
}

}  // namespace baton::parallel
