// Model averaging (research item 3, local SGD): each data-parallel replica steps on its own
// gradients, and the replicas' parameters are averaged every H steps instead of their gradients
// every step. See docs/data-parallel.md ("Model averaging").
#pragma once

#include <string_view>

namespace baton::parallel {

enum class Averaging {
  none,      // synchronous data parallelism: gradients all-reduced every step
  periodic,  // local SGD: parameters averaged every `every` steps
};
std::string_view averaging_name(Averaging kind);  // "none", "periodic"
// "none" or "periodic"; BMUF, EASGD and post-local SGD are named as not available yet.
Averaging parse_averaging(std::string_view name);

struct ModelAveraging {
  Averaging kind = Averaging::none;
  int every = 1;  // H: steps between averages

  bool active() const { return kind != Averaging::none; }
};

}  // namespace baton::parallel
