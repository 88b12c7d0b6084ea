// The emulated GPU's SIGSEGV handler: a fault in device memory (kept inaccessible to host code
// outside device work), in a kernel thread's stack guard page or past dynamic shared memory is
// reported with what it was, then the process aborts; any other fault goes to the previous handler.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "device_memory.h"
#include "fiber.h"
#include "simt_scheduler.h"

namespace baton_emu {

int arena_of_address(const void* address, std::string* detail);  // device_memory.cc

namespace {

struct sigaction previous_action;

[[noreturn]] void report_and_abort(const std::string& message) {
  const std::string line = "baton_emu: " + message + "\n";
  ssize_t written = write(STDERR_FILENO, line.data(), line.size());
  (void)written;
  signal(SIGABRT, SIG_DFL);
  std::abort();
}

void on_fault(int signal_number, siginfo_t* info, void* context) {
  const void* address = info->si_addr;
  std::string detail;
  char where[64];
  std::snprintf(where, sizeof where, "%p", address);
  const int device = arena_of_address(address, &detail);
  if (device >= 0) {
    if (inside_kernel()) {
      report_and_abort(std::string("a kernel faulted at ") + where + " in the device memory of device " +
                       std::to_string(device) + " outside every mapped allocation (" + detail + ")");
    }
    report_and_abort(std::string("host code accessed device memory of device ") + std::to_string(device) + " at " +
                     where + " (" + (detail.empty() ? "allocation unknown" : detail) +
                     "): device memory is only usable by kernels, copies and library calls on a stream");
  }
  if (in_shared_guard_page(address)) {
    report_and_abort(std::string("a kernel accessed ") + where +
                     ", past the end of the block's dynamic shared memory (the launch's shared-memory bytes)");
  }
  if (in_fiber_guard_page(address)) {
    report_and_abort(std::string("a CUDA thread overflowed its stack at ") + where + " (" +
                     std::to_string(kFiberStackBytes >> 10) + " KiB per thread)");
  }
  // Not ours: hand over to whatever was installed before (the default: a core dump).
  if (previous_action.sa_flags & SA_SIGINFO) {
    previous_action.sa_sigaction(signal_number, info, context);
  } else if (previous_action.sa_handler != SIG_IGN && previous_action.sa_handler != SIG_DFL) {
    previous_action.sa_handler(signal_number);
  } else {
    sigaction(SIGSEGV, &previous_action, nullptr);  // returns and faults again, now with the default
  }
}

}  // namespace

void install_fault_handler() {
  static const bool installed = [] {
    // The handler runs on its own stack so a fiber stack overflow can still be reported.
    static char alternate[64 << 10];
    stack_t stack{};
    stack.ss_sp = alternate;
    stack.ss_size = sizeof alternate;
    sigaltstack(&stack, nullptr);
    struct sigaction action {};
    action.sa_sigaction = &on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previous_action);
    return true;
  }();
  (void)installed;
}

}  // namespace baton_emu
