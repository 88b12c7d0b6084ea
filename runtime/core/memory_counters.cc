// Where the per-device counters live: a fixed table for the usual device indices, a locked map beyond.
#include "runtime/core/memory_counters.h"

#include <array>
#include <map>
#include <mutex>
#include <utility>

namespace baton::detail {
namespace {

// Devices with an index below this have their counters in a fixed table, reached without a lock
// (every allocation and free looks them up); higher indices (virtual CPU devices) in a locked map.
constexpr int kTableDevices = 64;

}  // namespace

DeviceCounters& device_counters(Device device) {
  static std::array<DeviceCounters, 2 * kTableDevices> table;  // (type, index) -> counters
  const int index = device.index();
  if (index >= 0 && index < kTableDevices) {
    return table[static_cast<size_t>(static_cast<int>(device.type()) * kTableDevices + index)];
  }
  static std::mutex mutex;
  static std::map<std::pair<int, int>, DeviceCounters> more;  // nodes never move
  std::lock_guard<std::mutex> lock(mutex);
  return more[{static_cast<int>(device.type()), index}];
}

}  // namespace baton::detail
