// Learning-rate schedules: pure functions of the optimiser step (0 for the first update).
//
// A linear warm-up from warmup_start_lr to base_lr over warmup_steps may precede any schedule.
// Step counts (step_size, milestones, switch_step, total_steps) are absolute optimiser steps,
// warm-up included; the decaying schedules decay over [warmup_steps, total_steps] and hold
// final_lr after total_steps.
//   constant      base_lr
//   step          base_lr * gamma^floor(step / step_size)
//   multistep     base_lr * gamma^(number of milestones <= step)
//   linear        base_lr -> final_lr linearly
//   cosine        final_lr + (base_lr - final_lr) * (1 + cos(pi * t)) / 2, t the fraction of the decay done
//   cosine_linear the cosine curve until switch_step, then a straight line from its value there to
//                 final_lr at total_steps (continuous at the switch): the hybrid decay of the
//                 grouped-pipeline work we build on.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace baton {

struct LrSchedule {
  enum class Kind { constant, step, multistep, linear, cosine, cosine_linear };
  Kind kind = Kind::constant;
  double base_lr = 0.1;
  double final_lr = 0.0;
  int64_t total_steps = 0;          // linear, cosine, cosine_linear
  int64_t step_size = 0;            // step
  std::vector<int64_t> milestones;  // multistep (increasing)
  double gamma = 0.1;               // step, multistep
  int64_t switch_step = 0;          // cosine_linear
  int64_t warmup_steps = 0;
  double warmup_start_lr = 0.0;

  double at(int64_t step) const;
  // Throws baton::Error naming `where` and the field for a bad value.
  void validate(std::string_view where) const;

  // {"type": "cosine", "base_lr": 0.1, "total_steps": 1000, "final_lr": 0, "warmup_steps": 100, ...}
  static LrSchedule from_json(const nlohmann::json& j, std::string_view where);
  nlohmann::json to_json() const;
};

}  // namespace baton
