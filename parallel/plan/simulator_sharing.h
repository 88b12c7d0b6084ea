// The simulator's computations under way and the compute pools they share: n computations on a pool
// of p places each progress at min(1, p / n) of their speed, as the kernel time-slices cores.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace baton::parallel::sim {

class SharedCompute {
 public:
  struct Running {
    int lane = 0;
    int pool = -1;  // -1: the lane's own hardware
    size_t interval = 0;
    int pc = 0;          // its instruction in the lane's program
    double left_ms = 0;  // full-speed time still to compute
  };

  // `pool_places[k]`: the places of pool k (each >= 1).
  explicit SharedCompute(std::vector<int> pool_places);

  int pools() const { return static_cast<int>(places_.size()); }
  // The clock: every computation has progressed up to it.
  double now() const { return now_; }

  void start(const Running& computation);
  // The computation that ends first at the current rates, and when (-1 and infinity: none).
  std::pair<int, double> next_finish() const;
  // Moves the clock to `t` (not earlier than now()), each computation progressing at its rate.
  void advance(double t);
  // Removes computation `index` (one next_finish() named) and returns it.
  Running finish(size_t index);

 private:
  double rate(int pool) const;

  std::vector<int> places_;   // per pool
  std::vector<int> running_;  // per pool: computations under way
  std::vector<Running> computations_;
  double now_ = 0;
};

}  // namespace baton::parallel::sim
