// Helpers of the schedule tests: short names for the compute ops, and where an instruction stands
// in a position's program.
#pragma once

#include <algorithm>
#include <vector>

#include "parallel/plan/schedule.h"

namespace baton::parallel::schedule_test {

inline constexpr Op kF = Op::forward;
inline constexpr Op kB = Op::backward;

// Index of the first instruction in `program` equal to `ins` (-1 if none).
inline int find(const std::vector<Instruction>& program, const Instruction& ins) {
  auto it = std::find(program.begin(), program.end(), ins);
  return it == program.end() ? -1 : static_cast<int>(it - program.begin());
}

}  // namespace baton::parallel::schedule_test
