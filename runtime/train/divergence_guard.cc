// DivergenceGuard: the divergence bound, the healthy bound and the checkpoint a run may go back to.
#include "runtime/train/divergence_guard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "runtime/core/error.h"

namespace baton {
namespace {

// "1e+22", "2.3026", "nan": a loss as %g prints it.
std::string format_number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

}  // namespace

void DivergenceGuard::restore(const nlohmann::json& stored, int64_t step, const std::string& where) {
  candidate_ = step;
  candidate_clean_ = true;
  if (stored.is_null()) return;
  BATON_CHECK(stored.is_object(), where, ": metadata 'divergence' is ", stored.dump(), ", expected an object");
  if (stored.contains("first_loss")) {
    const nlohmann::json& first = stored["first_loss"];
    BATON_CHECK(first.is_number() && std::isfinite(first.get<double>()), where,
                ": metadata 'divergence': first_loss is ", first.dump(), ", expected a finite number");
    first_loss_ = first.get<double>();
  }
  if (stored.contains("healthy_step")) {
    const nlohmann::json& healthy = stored["healthy_step"];
    BATON_CHECK(healthy.is_number_integer() && healthy.get<int64_t>() >= 0 && healthy.get<int64_t>() <= step, where,
                ": metadata 'divergence': healthy_step is ", healthy.dump(), ", expected a step from 0 to ", step);
    healthy_step_ = healthy.get<int64_t>();
  }
}

double DivergenceGuard::baseline() const { return std::max(1.0, std::abs(first_loss_.value_or(1.0))); }

std::string DivergenceGuard::check(int64_t step, double loss) {
  if (!first_loss_ && std::isfinite(loss)) first_loss_ = loss;
  if (!std::isfinite(loss) || loss > kHealthyLossFactor * baseline()) candidate_clean_ = false;
  if (std::isfinite(loss) && loss <= kExplodingLossFactor * baseline()) return "";
  std::string why = "the loss is " + format_number(loss) + " at step " + std::to_string(step + 1);
  if (std::isfinite(loss)) {
    why += ", over " + format_number(kExplodingLossFactor) + " times this run's first, " + format_number(*first_loss_);
  }
  return why;
}

void DivergenceGuard::checkpoint_at(int64_t step) {
  if (candidate_ && *candidate_ == step) return;  // saved again (an interruption after a periodic save)
  if (candidate_ && *candidate_ < step && candidate_clean_) healthy_step_ = *candidate_;
  candidate_ = step;
  candidate_clean_ = true;
}

nlohmann::json DivergenceGuard::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  if (first_loss_) j["first_loss"] = *first_loss_;
  if (healthy_step_) j["healthy_step"] = *healthy_step_;
  return j;
}

}  // namespace baton
