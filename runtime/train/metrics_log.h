// The JSON-lines metrics log: one JSON object per line, appended and flushed as it is written, so
// a run that stops early leaves every complete line readable.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace baton {

class MetricsLog {
 public:
  MetricsLog() = default;  // writes nothing
  // Appends to `path` (created if missing); throws naming the path if it cannot be opened.
  explicit MetricsLog(const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  void write(const nlohmann::json& record);

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

}  // namespace baton
