// The --device flag.
#include "tools/device_flag.h"

#include "parallel/parallel_training_run.h"
#include "tools/train_report.h"

namespace baton::cli {

Device pick_device(const std::string& name) {
  PrintedReport report;
  return parallel::single_training_device(name, report);
}

}  // namespace baton::cli
