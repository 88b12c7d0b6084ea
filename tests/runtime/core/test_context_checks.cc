// The Context's deferred-check pieces: the zeroed device-check buffer made on first use, the check
// tag, and BATON_SYNC_CHECKS (1 or 0; anything else is an error naming the variable).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "runtime/core/context.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

// Sets (or with nullopt unsets) an environment variable for the scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ContextChecks, DeviceCheckBufferIsMadeOnFirstUseZeroedAndKept) {
  Context ctx(Device::cpu());
  EXPECT_FALSE(ctx.has_device_checks());
  void* checks = ctx.device_checks();
  ASSERT_NE(checks, nullptr);
  EXPECT_TRUE(ctx.has_device_checks());
  const unsigned char zeros[Context::kDeviceCheckBytes] = {};
  EXPECT_EQ(std::memcmp(checks, zeros, Context::kDeviceCheckBytes), 0);
  std::memset(checks, 7, Context::kDeviceCheckBytes);
  EXPECT_EQ(ctx.device_checks(), checks);  // persistent: not remade, not cleared
  EXPECT_EQ(static_cast<unsigned char*>(ctx.device_checks())[3], 7);
}

TEST(ContextChecks, CheckTagStartsUnsetAndIsKept) {
  Context ctx(Device::cpu());
  EXPECT_EQ(ctx.check_tag(), -1);
  ctx.set_check_tag(3);
  EXPECT_EQ(ctx.check_tag(), 3);
}

TEST(ContextChecks, SyncChecksComeFromTheEnvironmentAndTheSetter) {
  {
    const ScopedEnv env("BATON_SYNC_CHECKS", std::nullopt);
    Context ctx(Device::cpu());
    EXPECT_FALSE(ctx.sync_checks());
    ctx.set_sync_checks(true);
    EXPECT_TRUE(ctx.sync_checks());
  }
  {
    const ScopedEnv env("BATON_SYNC_CHECKS", "1");
    Context ctx(Device::cpu());
    EXPECT_TRUE(ctx.sync_checks());
    ctx.set_sync_checks(false);
    EXPECT_FALSE(ctx.sync_checks());
    EXPECT_TRUE(Context(Stream::create(Device::cpu())).sync_checks());
  }
  {
    const ScopedEnv env("BATON_SYNC_CHECKS", "0");
    EXPECT_FALSE(Context(Device::cpu()).sync_checks());
  }
  {
    const ScopedEnv env("BATON_SYNC_CHECKS", "yes");
    EXPECT_ERROR_MENTIONS("environment variable BATON_SYNC_CHECKS is 'yes', expected 1", (void)Context(Device::cpu()));
  }
}

}  // namespace
}  // namespace baton
