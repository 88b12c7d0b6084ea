// Device descriptions: the shipped ones round-trip through JSON, peak rates, which are measured, and clear errors.
#include <gtest/gtest.h>

#include "parallel/plan/device_spec.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

TEST(DeviceSpec, ShippedNamesAndErrors) {
  for (const std::string& name : device_spec_names()) {
    const DeviceSpec s = device_spec_by_name(name);
    EXPECT_GT(s.peak_tflops_fp32, 0) << name;
    EXPECT_GT(s.memory_bandwidth_gbs, 0) << name;
    EXPECT_EQ(device_spec_to_json(device_spec_from_json(device_spec_to_json(s), "x")), device_spec_to_json(s));
    // Only "cpu" is measured on the spot; the GPUs are datasheet figures, uncalibrated.
    EXPECT_EQ(s.measured, name == "cpu") << name;
  }
  EXPECT_GT(peak_flops(device_spec_by_name("h200"), "f32", true),
            peak_flops(device_spec_by_name("h200"), "f32", false));
  EXPECT_ERROR_MENTIONS("unknown device description 'h300'", device_spec_by_name("h300"));
  nlohmann::json j = device_spec_to_json(device_spec_by_name("h100-sxm"));
  j.erase("measured");  // optional: a description from a file is a datasheet's unless it says otherwise
  EXPECT_FALSE(device_spec_from_json(j, "d.json").measured);
  j["measured"] = "yes";
  EXPECT_ERROR_MENTIONS("d.json: field 'measured'", device_spec_from_json(j, "d.json"));
  j["measured"] = true;
  EXPECT_TRUE(device_spec_from_json(j, "d.json").measured);
  j["compute_efficiency"] = 1.5;
  EXPECT_ERROR_MENTIONS("field 'compute_efficiency': expected a fraction", device_spec_from_json(j, "d.json"));
}

}  // namespace
}  // namespace baton::parallel
