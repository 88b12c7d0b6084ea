// Names of the model-averaging variants.
#include "parallel/dp/model_averaging.h"

#include "runtime/core/error.h"

namespace baton::parallel {

std::string_view averaging_name(Averaging kind) { return kind == Averaging::periodic ? "periodic" : "none"; }

Averaging parse_averaging(std::string_view name) {
  if (name == "none") return Averaging::none;
  if (name == "periodic") return Averaging::periodic;
  BATON_CHECK(name != "bmuf" && name != "easgd" && name != "post-local", "--model-averaging ", name,
              " is not available yet (periodic is; docs/data-parallel.md)");
  BATON_FAIL("unknown --model-averaging '", name, "' (expected none or periodic)");
}

}  // namespace baton::parallel
