// The start of every hand-built profile of the planner tests: an analytic profile of `model` on the
// "test" device, with no nodes or values yet.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "parallel/plan/profile.h"

namespace baton::parallel::fixtures {

inline Profile empty_profile(const std::string& model, std::vector<int> batch_sizes) {
  Profile p;
  p.model = model;
  p.device = "test";
  p.source = "analytic";
  p.batch_sizes = std::move(batch_sizes);
  return p;
}

}  // namespace baton::parallel::fixtures
