// Logging implementation: one mutex-guarded line per message.
#include "runtime/core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "runtime/core/enum_table.h"

namespace baton {
namespace {

LogLevel level_from_environment() {
  const char* text = std::getenv("BATON_LOG");
  if (text == nullptr || *text == '\0') return LogLevel::info;
  try {
    return parse_log_level(text);
  } catch (const Error& e) {
    std::fprintf(stderr, "[baton warn] environment variable BATON_LOG: %s; using info\n", e.message().c_str());
    return LogLevel::info;
  }
}

std::atomic<int>& level_storage() {
  static std::atomic<int> level{static_cast<int>(level_from_environment())};
  return level;
}

const char* level_name(LogLevel level) {
  constexpr const char* kNames[] = {"debug", "info", "warn", "error"};
  return enum_lookup<LogLevel::error>(level, kNames, "?");
}

}  // namespace

LogLevel log_level() { return static_cast<LogLevel>(level_storage().load(std::memory_order_relaxed)); }

void set_log_level(LogLevel level) { level_storage().store(static_cast<int>(level)); }

LogLevel parse_log_level(std::string_view text) {
  for (LogLevel l : {LogLevel::debug, LogLevel::info, LogLevel::warn, LogLevel::error}) {
    if (text == level_name(l)) return l;
  }
  BATON_FAIL("unknown log level '", text, "': expected debug, info, warn or error");
}

void log_message(LogLevel level, std::string_view message) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "[baton %s] %.*s\n", level_name(level), static_cast<int>(message.size()), message.data());
}

}  // namespace baton
