// A request to stop the process's work (made by a SIGINT or SIGTERM handler), polled by the long
// loops — training steps, evaluation, profiling, planning — so that a signal takes effect within
// seconds in every phase.
#pragma once

#include <string>

#include "runtime/core/error.h"

namespace baton {

// Records that `signal` asked the process to stop (async-signal-safe: a handler may call it).
void request_stop(int signal) noexcept;

// Whether a stop was requested (and not cleared since).
bool stop_requested() noexcept;

// The signal of the request, 0 when none.
int stop_signal() noexcept;

// Forgets a request (a command that installs its handlers starts without one).
void clear_stop_request() noexcept;

// The work named by `during` was cut short by a stop request: nothing of it is kept.
class Interrupted : public Error {
 public:
  Interrupted(int signal, const std::string& during);
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Throws Interrupted (naming the signal and `during`, e.g. "profiling the model") when a stop was
// requested.
void check_stop_request(const std::string& during);

}  // namespace baton
