// spin_until: a short spin (yielding the core) before a blocking wait, so that a hand-off between a
// caller and its communication thread costs about a microsecond instead of two sleeps and wake-ups.
#pragma once

#include <chrono>
#include <thread>

namespace baton::comm {

// How long a waiting thread polls before it blocks: longer than a hand-off, short against a step.
inline constexpr std::chrono::microseconds kHandOffSpin{100};

// Polls `ready` until it returns true (then true) or `budget` has passed (then false), yielding
// the core between polls so that a thread with work runs first.
template <typename Ready>
bool spin_until(Ready&& ready, std::chrono::microseconds budget = kHandOffSpin) {
  const auto end = std::chrono::steady_clock::now() + budget;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace baton::comm
