// libFuzzer target: a training config file — strict JSON, the train fields and the "parallel"
// object. Any input either parses into a validated config or throws baton::Error; nothing else.
#include <cstdint>

#include "parallel/parallel_config.h"
#include "runtime/core/error.h"
#include "runtime/graph/json_fields.h"
#include "runtime/train/train_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    nlohmann::json file = baton::parse_json_text(baton::fuzz::as_text(data, size), "fuzz.json");
    (void)baton::parallel::take_parallel_config(file, "fuzz.json");
    baton::TrainConfig config;
    config.update_from_json(file, "fuzz.json");
    config.validate("fuzz.json");
  } catch (const baton::Error&) {
  }
  return 0;
}
