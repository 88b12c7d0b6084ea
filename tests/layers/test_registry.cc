// The built-in registry: known types build from JSON, unknown types and fields are clear errors.
#include <gtest/gtest.h>

#include "layers/builtin_layers.h"
#include "runtime/core/error.h"

namespace baton::layers {
namespace {

TEST(LayerRegistry, BuildsKnownTypesAndRoundTripsConfig) {
  const LayerRegistry& r = builtin_layers();
  for (const std::string& type : r.types()) {
    SCOPED_TRACE(type);
    EXPECT_TRUE(r.contains(type));
  }
  auto relu = r.create("ReLU", nlohmann::json::object());
  EXPECT_EQ(relu->type(), "ReLU");
  auto again = r.create(relu->type(), relu->config());
  EXPECT_EQ(again->config(), relu->config());
}

TEST(LayerRegistry, UnknownTypeListsTheRegisteredOnes) {
  try {
    builtin_layers().create("Conv3d", nlohmann::json::object());
    FAIL() << "Conv3d accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown layer type 'Conv3d'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ReLU"), std::string::npos) << e.what();
  }
}

TEST(LayerRegistry, UnknownConfigFieldIsAnError) {
  EXPECT_THROW(builtin_layers().create("ReLU", nlohmann::json{{"inplace", true}}), Error);
}

}  // namespace
}  // namespace baton::layers
