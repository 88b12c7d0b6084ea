// Levelled logging to stderr; the level comes from BATON_LOG=debug|info|warn|error (default info).
#pragma once

#include <string_view>

#include "runtime/core/error.h"

namespace baton {

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3 };

LogLevel log_level();
void set_log_level(LogLevel level);
// Parses "debug", "info", "warn", "error"; throws baton::Error otherwise.
LogLevel parse_log_level(std::string_view text);
void log_message(LogLevel level, std::string_view message);

template <typename... Args>
void log_debug(const Args&... args) {
  if (log_level() <= LogLevel::debug) log_message(LogLevel::debug, detail::concat(args...));
}
template <typename... Args>
void log_info(const Args&... args) {
  if (log_level() <= LogLevel::info) log_message(LogLevel::info, detail::concat(args...));
}
template <typename... Args>
void log_warn(const Args&... args) {
  if (log_level() <= LogLevel::warn) log_message(LogLevel::warn, detail::concat(args...));
}
template <typename... Args>
void log_error(const Args&... args) {
  log_message(LogLevel::error, detail::concat(args...));
}

}  // namespace baton
