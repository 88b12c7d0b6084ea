// Learning-rate schedules.
#include "runtime/train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "runtime/core/error.h"
#include "runtime/graph/json_config.h"

namespace baton {
namespace {

struct KindName {
  LrSchedule::Kind kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {LrSchedule::Kind::constant, "constant"},   {LrSchedule::Kind::step, "step"},
    {LrSchedule::Kind::multistep, "multistep"}, {LrSchedule::Kind::linear, "linear"},
    {LrSchedule::Kind::cosine, "cosine"},       {LrSchedule::Kind::cosine_linear, "cosine_linear"}};

}  // namespace

double LrSchedule::at(int64_t step) const {
  if (step < 0) step = 0;
  if (step < warmup_steps) {
    return warmup_start_lr +
           (base_lr - warmup_start_lr) * static_cast<double>(step) / static_cast<double>(warmup_steps);
  }
  const double span = static_cast<double>(std::max<int64_t>(total_steps - warmup_steps, 1));
  const double done = std::clamp(static_cast<double>(step - warmup_steps) / span, 0.0, 1.0);
  auto cosine_at = [&](double t) {
    return final_lr + (base_lr - final_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * t));
  };
  switch (kind) {
    case Kind::constant:
      return base_lr;
    case Kind::step:
      return base_lr * std::pow(gamma, static_cast<double>(step / step_size));
    case Kind::multistep: {
      const auto passed = std::upper_bound(milestones.begin(), milestones.end(), step) - milestones.begin();
      return base_lr * std::pow(gamma, static_cast<double>(passed));
    }
    case Kind::linear:
      return base_lr + (final_lr - base_lr) * done;
    case Kind::cosine:
      return cosine_at(done);
    case Kind::cosine_linear: {
      if (step <= switch_step) return cosine_at(done);
      const double at_switch = cosine_at(static_cast<double>(switch_step - warmup_steps) / span);
      const double t = std::clamp(static_cast<double>(step - switch_step) /
                                      static_cast<double>(std::max<int64_t>(total_steps - switch_step, 1)),
                                  0.0, 1.0);
      return at_switch + (final_lr - at_switch) * t;
    }
  }
  return base_lr;
}

void LrSchedule::validate(std::string_view where) const {
  BATON_CHECK(base_lr >= 0 && std::isfinite(base_lr), where, ": base_lr must be a finite number >= 0, got ", base_lr);
  BATON_CHECK(final_lr >= 0 && std::isfinite(final_lr), where, ": final_lr must be a finite number >= 0, got ",
              final_lr);
  BATON_CHECK(warmup_steps >= 0, where, ": warmup_steps must be >= 0, got ", warmup_steps);
  BATON_CHECK(warmup_start_lr >= 0, where, ": warmup_start_lr must be >= 0, got ", warmup_start_lr);
  if (kind == Kind::step) BATON_CHECK(step_size > 0, where, ": step_size must be > 0, got ", step_size);
  if (kind == Kind::step || kind == Kind::multistep) {
    BATON_CHECK(gamma > 0, where, ": gamma must be > 0, got ", gamma);
  }
  if (kind == Kind::multistep) {
    BATON_CHECK(!milestones.empty(), where, ": multistep needs a non-empty 'milestones' list");
    BATON_CHECK(std::is_sorted(milestones.begin(), milestones.end()) &&
                    std::adjacent_find(milestones.begin(), milestones.end()) == milestones.end() && milestones[0] > 0,
                where, ": milestones must be increasing step numbers > 0");
  }
  if (kind == Kind::linear || kind == Kind::cosine || kind == Kind::cosine_linear) {
    // These schedules decay: one that would climb is a swapped pair of values.
    BATON_CHECK(final_lr <= base_lr, where, ": final_lr (", final_lr, ") must not exceed base_lr (", base_lr, "): the ",
                kind == Kind::linear ? "linear" : "cosine", " schedule decays from base_lr to final_lr");
    BATON_CHECK(total_steps > warmup_steps, where, ": total_steps (", total_steps, ") must exceed warmup_steps (",
                warmup_steps, ")");
  }
  if (kind == Kind::cosine_linear) {
    BATON_CHECK(switch_step >= warmup_steps && switch_step < total_steps, where,
                ": switch_step must be in [warmup_steps, total_steps), got ", switch_step);
  }
}

LrSchedule LrSchedule::from_json(const nlohmann::json& j, std::string_view where) {
  const std::string what = std::string(where);
  JsonConfig c(j, what,
               {"type", "base_lr", "final_lr", "total_steps", "step_size", "milestones", "gamma", "switch_step",
                "warmup_steps", "warmup_start_lr"});
  LrSchedule s;
  const std::string type = c.get_string("type", "constant");
  bool known = false;
  for (const KindName& k : kKinds) {
    if (type == k.name) {
      s.kind = k.kind;
      known = true;
    }
  }
  BATON_CHECK(known, what, ": field 'type' is \"", type,
              "\", expected constant, step, multistep, linear, cosine or cosine_linear");
  s.base_lr = c.get_double("base_lr", s.base_lr);
  s.final_lr = c.get_double("final_lr", s.final_lr);
  s.total_steps = c.get_int("total_steps", 0);
  s.step_size = c.get_int("step_size", 0);
  s.gamma = c.get_double("gamma", s.gamma);
  s.switch_step = c.get_int("switch_step", 0);
  s.warmup_steps = c.get_int("warmup_steps", 0);
  s.warmup_start_lr = c.get_double("warmup_start_lr", 0.0);
  if (c.has("milestones")) {
    const nlohmann::json& m = j.at("milestones");
    BATON_CHECK(m.is_array(), what, ": field 'milestones' must be a list of step numbers, got ", m.dump());
    for (const auto& v : m) {
      BATON_CHECK(v.is_number_integer(), what, ": field 'milestones' must hold integers, got ", v.dump());
      s.milestones.push_back(v.get<int64_t>());
    }
  }
  s.validate(what);
  return s;
}

nlohmann::json LrSchedule::to_json() const {
  nlohmann::json j;
  for (const KindName& k : kKinds) {
    if (k.kind == kind) j["type"] = k.name;
  }
  j["base_lr"] = base_lr;
  j["warmup_steps"] = warmup_steps;
  j["warmup_start_lr"] = warmup_start_lr;
  switch (kind) {
    case Kind::constant:
      break;
    case Kind::step:
      j["step_size"] = step_size;
      j["gamma"] = gamma;
      break;
    case Kind::multistep:
      j["milestones"] = milestones;
      j["gamma"] = gamma;
      break;
    case Kind::cosine_linear:
      j["switch_step"] = switch_step;
      [[fallthrough]];
    case Kind::linear:
    case Kind::cosine:
      j["total_steps"] = total_steps;
      j["final_lr"] = final_lr;
      break;
  }
  return j;
}

}  // namespace baton
