// `baton train`'s report of what a run does (runtime/train/progress.h): each line printed on the
// standard output and flushed as it is said.
#pragma once

#include <cstdio>
#include <string>

#include "runtime/train/progress.h"

namespace baton::cli {

class PrintedReport : public RunReport {
 public:
  void line(const std::string& text) override {
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }
};

}  // namespace baton::cli
