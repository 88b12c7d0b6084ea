// Model averaging (research item 3): data-parallel replicas step on their own gradients and meet
// through their parameters every H steps instead of through their gradients every step: periodic
// averaging (local SGD), BMUF (block momentum), EASGD (elastic averaging) and post-local SGD. See
// docs/data-parallel.md ("Model averaging").
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace baton::parallel {

enum class Averaging {
  none,        // synchronous data parallelism: gradients all-reduced every step
  periodic,    // local SGD: parameters averaged every `every` steps
  bmuf,        // block-wise model update filtering: block momentum on the averaged parameters' change
  easgd,       // elastic averaging: replicas and a centre variable pulled towards each other
  post_local,  // synchronous for the first `local_after` steps, then periodic
};
std::string_view averaging_name(Averaging kind);  // "none", "periodic", "bmuf", "easgd", "post-local"
// One of the names above; anything else is an error naming --model-averaging and the choices.
Averaging parse_averaging(std::string_view name);

// How the replicas' parameters are averaged (docs/data-parallel.md "The averaging exchange").
enum class ExchangeKind {
  ring,  // ring all-reduce over every replica: reduce-scatter, then all-gather, on send/recv
  tree,  // reduce inside each node, ring all-reduce among the node leaders, broadcast inside each node
};
std::string_view exchange_name(ExchangeKind kind);   // "ring", "tree"
ExchangeKind parse_exchange(std::string_view name);  // an error naming --averaging-exchange otherwise

struct ModelAveraging {
  Averaging kind = Averaging::none;
  int every = 1;  // H: steps between averages (the block of BMUF, the period of EASGD)
  // BMUF: block momentum mu (unset: 1 - 1/N for N replicas) and block learning rate zeta; the
  // replicas start each block from w_g + mu v (Nesterov-style, the default) or from w_g.
  std::optional<double> block_momentum = std::nullopt;
  double block_lr = 1;
  bool block_nesterov = true;
  // EASGD: moving rate beta; each replica moves alpha = beta / N of the way to the centre.
  double elastic_beta = 0.9;
  // Post-local SGD: steps of synchronous data parallelism before local SGD starts.
  int local_after = 0;
  ExchangeKind exchange = ExchangeKind::ring;
  // The node of every rank for the tree exchange (world-size entries); empty: ranks on one host are
  // one node (every process's host name compared).
  std::vector<int> nodes = {};

  bool active() const { return kind != Averaging::none; }
  // True when step `step` (0-based, counted by the engine) all-reduces gradients: never with model
  // averaging, but for the first `local_after` steps of post-local SGD.
  bool synchronous_step(long long step) const;
  // True when the replicas meet after step `step` (0-based).
  bool averages_after(long long step) const;
  // BMUF's block momentum for `replicas` replicas.
  double block_momentum_for(int replicas) const;
};

// One clear error, naming the flag, for knobs out of range (H < 1, mu outside [0, 1), zeta <= 0,
// beta outside (0, 1], K < 0, a node list of the wrong length).
void check_model_averaging(const ModelAveraging& averaging, int replicas);

}  // namespace baton::parallel
