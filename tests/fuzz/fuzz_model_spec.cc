// libFuzzer target: a model spec (graph JSON) read with the built-in layers and printed back.
#include <cstdint>

#include "layers/builtin_layers.h"
#include "runtime/core/error.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/json_fields.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const nlohmann::json spec = baton::parse_json_text(baton::fuzz::as_text(data, size), "spec.json");
    const baton::Graph graph = baton::Graph::from_json(spec, baton::layers::builtin_layers(), "spec.json");
    (void)graph.to_json().dump();
  } catch (const baton::Error&) {
  }
  return 0;
}
