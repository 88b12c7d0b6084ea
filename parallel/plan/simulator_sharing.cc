// SharedCompute: the simulator's computations under way, progressing at their pools' shared rates.
#include "parallel/plan/simulator_sharing.h"

#include <algorithm>
#include <limits>

#include "runtime/core/error.h"

namespace baton::parallel::sim {

SharedCompute::SharedCompute(std::vector<int> pool_places) : places_(std::move(pool_places)) {
  for (const int places : places_) {
    BATON_CHECK(places >= 1, "simulate: a compute pool needs at least one place, got ", places);
  }
  running_.assign(places_.size(), 0);
}

double SharedCompute::rate(int pool) const {
  if (pool < 0) return 1.0;
  return std::min(1.0, static_cast<double>(places_[pool]) / running_[pool]);
}

void SharedCompute::start(const Running& computation) {
  BATON_CHECK(computation.pool < pools(), "simulate: compute pool ", computation.pool, " of ", pools());
  if (computation.pool >= 0) ++running_[computation.pool];
  computations_.push_back(computation);
}

std::pair<int, double> SharedCompute::next_finish() const {
  int first = -1;
  double when = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < computations_.size(); ++i) {
    const double t = now_ + computations_[i].left_ms / rate(computations_[i].pool);
    if (t < when) {
      first = static_cast<int>(i);
      when = t;
    }
  }
  return {first, when};
}

void SharedCompute::advance(double t) {
  if (t <= now_) return;
  for (Running& r : computations_) r.left_ms = std::max(0.0, r.left_ms - (t - now_) * rate(r.pool));
  now_ = t;
}

SharedCompute::Running SharedCompute::finish(size_t index) {
  const Running done = computations_[index];
  computations_.erase(computations_.begin() + static_cast<std::ptrdiff_t>(index));
  if (done.pool >= 0) --running_[done.pool];
  return done;
}

}  // namespace baton::parallel::sim
