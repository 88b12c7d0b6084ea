// Training progress on the terminal: a progress bar redrawn in place on a terminal, plain
// periodic lines otherwise (a log file, CI); and the report of a run's set-up, line by line.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

namespace baton {

struct ProgressUpdate {
  int64_t epoch = 0;
  int64_t batch = 0;  // batches done in this epoch
  int64_t batches_per_epoch = 0;
  int64_t step = 0;  // optimiser steps done in the run
  double loss = 0;
  double lr = 0;
  double samples_per_second = 0;
  double eta_seconds = 0;  // for the whole run
};

class ProgressReporter {
 public:
  // `interactive`: redraw one line (a terminal); else print a line every `every` steps. A null `out`
  // prints nothing (the quiet processes of a multi-process run).
  ProgressReporter(std::FILE* out, bool interactive, int64_t every);
  void update(const ProgressUpdate& u);
  // A line of its own (evaluations, checkpoints), ending any bar in progress.
  void message(const std::string& text);
  // Ends the bar of an epoch.
  void finish_epoch();

 private:
  std::FILE* out_;
  bool interactive_;
  int64_t every_;
  bool bar_open_ = false;
};

// "1:02:03" or "2:03".
std::string format_duration(double seconds);

// Where a run's set-up and training say what they do, a line at a time (the device chosen, the plan
// and its stage table, where the replicas run, the step times); the command line prints the lines.
class RunReport {
 public:
  virtual ~RunReport() = default;
  // One line (or several, separated by newlines) without its final newline.
  virtual void line(const std::string& text) = 0;
};

// The lines of a report passed to a function (none without one).
class FunctionReport : public RunReport {
 public:
  explicit FunctionReport(std::function<void(const std::string&)> hear) : hear_(std::move(hear)) {}
  void line(const std::string& text) override {
    if (hear_) hear_(text);
  }

 private:
  std::function<void(const std::string&)> hear_;
};

// printf's formatting into a string, for RunReport lines.
std::string formatted(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace baton
