// The process's stop request: one lock-free atomic, set from a signal handler, read by long loops.
#include "runtime/core/stop_request.h"

#include <atomic>
#include <csignal>

namespace baton {
namespace {

std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only touch lock-free atomics");

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

}  // namespace

void request_stop(int signal) noexcept { g_stop_signal.store(signal); }

bool stop_requested() noexcept { return g_stop_signal.load() != 0; }

int stop_signal() noexcept { return g_stop_signal.load(); }

void clear_stop_request() noexcept { g_stop_signal.store(0); }

Interrupted::Interrupted(int signal, const std::string& during)
    : Error("stopped by " + signal_name(signal) + " while " + during), signal_(signal) {}

void check_stop_request(const std::string& during) {
  const int signal = stop_signal();
  if (signal != 0) throw Interrupted(signal, during);
}

}  // namespace baton
