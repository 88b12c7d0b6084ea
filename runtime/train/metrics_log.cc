// MetricsLog: one JSON line per record appended to the run's metrics file, flushed as written.
#include "runtime/train/metrics_log.h"

#include <cerrno>
#include <cstring>

#include "runtime/core/error.h"

namespace baton {

MetricsLog::MetricsLog(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "a");
  BATON_CHECK(file_ != nullptr, "cannot open metrics file '", path, "': ", std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void MetricsLog::write(const nlohmann::json& record) {
  if (file_ == nullptr) return;
  const std::string line = record.dump() + "\n";
  BATON_CHECK(std::fwrite(line.data(), 1, line.size(), file_) == line.size() && std::fflush(file_) == 0,
              "cannot write metrics file '", path_, "': ", std::strerror(errno));
}

}  // namespace baton
