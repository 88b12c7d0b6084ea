// Names, schedule and checks of the model-averaging variants.
#include "parallel/replicas/model_averaging.h"

#include <cmath>

#include "runtime/core/enum_table.h"
#include "runtime/core/error.h"

namespace baton::parallel {

std::string_view averaging_name(Averaging kind) {
  constexpr std::string_view kNames[] = {"none", "periodic", "bmuf", "easgd", "post-local"};
  return enum_lookup<Averaging::post_local>(kind, kNames, "none");
}

Averaging parse_averaging(std::string_view name) {
  for (Averaging kind :
       {Averaging::none, Averaging::periodic, Averaging::bmuf, Averaging::easgd, Averaging::post_local}) {
    if (name == averaging_name(kind)) return kind;
  }
  BATON_FAIL("unknown --model-averaging '", name, "' (expected none, periodic, bmuf, easgd or post-local)");
}

std::string_view exchange_name(ExchangeKind kind) { return kind == ExchangeKind::tree ? "tree" : "ring"; }

ExchangeKind parse_exchange(std::string_view name) {
  if (name == "ring") return ExchangeKind::ring;
  if (name == "tree") return ExchangeKind::tree;
  BATON_FAIL("unknown --averaging-exchange '", name, "' (expected ring or tree)");
}

bool ModelAveraging::synchronous_step(long long step) const {
  return kind == Averaging::none || (kind == Averaging::post_local && step < local_after);
}

bool ModelAveraging::averages_after(long long step) const {
  if (synchronous_step(step)) return false;
  const long long local = kind == Averaging::post_local ? step - local_after : step;
  return (local + 1) % every == 0;
}

double ModelAveraging::block_momentum_for(int replicas) const { return block_momentum.value_or(1.0 - 1.0 / replicas); }

void check_model_averaging(const ModelAveraging& a, int replicas) {
  BATON_CHECK(a.every >= 1, "--average-every must be at least 1 (got ", a.every, ")");
  BATON_CHECK(!a.block_momentum || (*a.block_momentum >= 0 && *a.block_momentum < 1),
              "--block-momentum must be in [0, 1) (got ", a.block_momentum.value_or(0), "; default 1 - 1/N)");
  BATON_CHECK(a.block_lr > 0, "--block-lr must be greater than 0 (got ", a.block_lr, ")");
  BATON_CHECK(std::isfinite(a.block_lr), "--block-lr must be finite (got ", a.block_lr, ")");
  BATON_CHECK(a.elastic_beta > 0 && a.elastic_beta <= 1, "--elastic-beta must be in (0, 1] (got ", a.elastic_beta, ")");
  BATON_CHECK(a.local_after >= 0, "--local-after must be at least 0 (got ", a.local_after, ")");
  BATON_CHECK(a.nodes.empty() || static_cast<int>(a.nodes.size()) == replicas, "model averaging: ", a.nodes.size(),
              " node numbers for ", replicas, " replicas (one per replica)");
}

}  // namespace baton::parallel
