// baton::Error messages and context; log level parsing.
#include <gtest/gtest.h>

#include "runtime/core/error.h"
#include "runtime/core/log.h"

namespace baton {
namespace {

TEST(Error, CheckCarriesMessageLocationAndContext) {
  try {
    const int got = 3;
    BATON_CHECK(got == 4, "expected 4 channels, got ", got);
    FAIL() << "BATON_CHECK did not throw";
  } catch (Error& e) {
    EXPECT_EQ(e.message(), "expected 4 channels, got 3");
    EXPECT_NE(std::string(e.what()).find("tests/runtime/core/test_errors_log.cc:"), std::string::npos) << e.what();
    e.add_context("in layer conv1");
    EXPECT_NE(std::string(e.what()).find("\n  in layer conv1"), std::string::npos);
    ASSERT_EQ(e.context().size(), 1u);
  }
}

TEST(Log, LevelsParseAndUnknownIsAnError) {
  EXPECT_EQ(parse_log_level("debug"), LogLevel::debug);
  EXPECT_EQ(parse_log_level("error"), LogLevel::error);
  EXPECT_THROW(parse_log_level("verbose"), Error);
  const LogLevel saved = log_level();
  set_log_level(LogLevel::warn);
  EXPECT_EQ(log_level(), LogLevel::warn);
  ::testing::internal::CaptureStderr();
  log_info("hidden");
  log_warn("shown ", 42);
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "[baton warn] shown 42\n");
  set_log_level(saved);
}

}  // namespace
}  // namespace baton
