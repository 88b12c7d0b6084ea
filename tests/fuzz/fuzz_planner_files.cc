// libFuzzer target: the planner's files — a profile, a cluster and a device description — each read
// from the same input (a JSON document that one of them may accept).
#include <cstdint>

#include "parallel/plan/cluster.h"
#include "parallel/plan/device_spec.h"
#include "parallel/plan/profile.h"
#include "runtime/core/error.h"
#include "runtime/graph/json_fields.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json json;
  try {
    json = baton::parse_json_text(baton::fuzz::as_text(data, size), "fuzz.json");
  } catch (const baton::Error&) {
    return 0;
  }
  try {
    (void)baton::parallel::profile_from_json(json, "profile.json");
  } catch (const baton::Error&) {
  }
  try {
    (void)baton::parallel::cluster_from_json(json, "cluster.json");
  } catch (const baton::Error&) {
  }
  try {
    (void)baton::parallel::device_spec_from_json(json, "device.json");
  } catch (const baton::Error&) {
  }
  return 0;
}
