// Output of the processes of a multi-process job other than rank 0 (see rank_output.h).
#include "tools/rank_output.h"

#include <cstdio>

#include "runtime/core/error.h"

namespace baton::cli {

std::string rank_path(const std::string& path, int rank) {
  const std::string suffix = ".rank" + std::to_string(rank);
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && slash > dot)) return path + suffix;
  return path.substr(0, dot) + suffix + path.substr(dot);
}

void quiet_stdout() {
  std::fflush(stdout);
  BATON_CHECK(std::freopen("/dev/null", "w", stdout) != nullptr, "cannot redirect the standard output to /dev/null");
}

}  // namespace baton::cli
