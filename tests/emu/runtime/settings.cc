// Settings of the emulated GPU from the environment, read once; a bad value aborts naming it.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime_state.h"

namespace baton_emu {
namespace {

uint64_t parse_number(const char* name, const char* text, uint64_t low, uint64_t high) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || value < low || value > high) {
    fatal(std::string(name) + "='" + text + "': expected a whole number from " + std::to_string(low) + " to " +
          std::to_string(high));
  }
  std::string rest(end);
  uint64_t scale = 1;
  if (rest == "K" || rest == "KiB")
    scale = uint64_t{1} << 10;
  else if (rest == "M" || rest == "MiB")
    scale = uint64_t{1} << 20;
  else if (rest == "G" || rest == "GiB")
    scale = uint64_t{1} << 30;
  else if (!rest.empty())
    fatal(std::string(name) + "='" + text + "': unknown suffix '" + rest + "' (K, M or G)");
  return value * scale;
}

Settings read_settings() {
  Settings s;
  if (const char* v = std::getenv("BATON_EMU_DEVICES"))
    s.devices = static_cast<int>(parse_number("BATON_EMU_DEVICES", v, 0, 16));
  if (const char* v = std::getenv("BATON_EMU_MEMORY")) {
    s.memory_bytes = parse_number("BATON_EMU_MEMORY", v, 1, uint64_t{1} << 40);
    if (s.memory_bytes < (size_t{1} << 20)) fatal("BATON_EMU_MEMORY: at least 1M of device memory is needed");
  }
  if (const char* v = std::getenv("BATON_EMU_SCHEDULE")) {
    const std::string value(v);
    if (value == "forward")
      s.schedule = Schedule::forward;
    else if (value == "reverse")
      s.schedule = Schedule::reverse;
    else if (value == "random")
      s.schedule = Schedule::random;
    else
      fatal("BATON_EMU_SCHEDULE='" + value + "': expected forward, reverse or random");
  }
  if (const char* v = std::getenv("BATON_EMU_SEED")) {
    s.seed = parse_number("BATON_EMU_SEED", v, 0, UINT64_MAX);
  } else {
    s.seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  if (s.schedule == Schedule::random) {
    std::fprintf(stderr, "baton_emu: random schedule, seed %llu (BATON_EMU_SEED=%llu repeats it)\n",
                 static_cast<unsigned long long>(s.seed), static_cast<unsigned long long>(s.seed));
  }
  if (const char* v = std::getenv("BATON_EMU_PROTECT")) s.protect_device_memory = std::string(v) != "0";
  if (const char* v = std::getenv("BATON_EMU_HANG_SECONDS")) {
    char* end = nullptr;
    s.hang_seconds = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(s.hang_seconds > 0) || s.hang_seconds > 1e6) {
      fatal(std::string("BATON_EMU_HANG_SECONDS='") + v + "': expected seconds above 0 (e.g. 120 or 0.5)");
    }
  }
  return s;
}

}  // namespace

const Settings& settings() {
  static const Settings s = read_settings();
  return s;
}

std::recursive_mutex& runtime_lock() {
  static std::recursive_mutex lock;
  return lock;
}

}  // namespace baton_emu
