// Output of the processes of a multi-process job other than rank 0 (see rank_output.h).
#include "tools/rank_output.h"

#include <cstdio>

#include "runtime/core/error.h"

namespace baton::cli {

void quiet_stdout() {
  std::fflush(stdout);
  BATON_CHECK(std::freopen("/dev/null", "w", stdout) != nullptr, "cannot redirect the standard output to /dev/null");
}

}  // namespace baton::cli
