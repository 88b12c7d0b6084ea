// Device names, parsing and the CUDA device count.
#include "runtime/core/device.h"

#include <charconv>

#include "runtime/core/build_config.h"
#include "runtime/core/error.h"

#if BATON_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace baton {

Device Device::parse(std::string_view text) {
  auto fail = [&]() -> Device {
    BATON_FAIL("unknown device '", text, "': expected cpu, cpu:N, cuda or cuda:N with N >= 0");
  };
  const auto colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  DeviceType type;
  if (kind == "cpu") {
    type = DeviceType::cpu;
  } else if (kind == "cuda") {
    type = DeviceType::cuda;
  } else {
    return fail();
  }
  if (colon == std::string_view::npos) return Device(type, 0);
  const std::string_view number = text.substr(colon + 1);
  int index = -1;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), index);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || index < 0) return fail();
  return Device(type, index);
}

std::string Device::str() const { return std::string(is_cpu() ? "cpu:" : "cuda:") + std::to_string(index_); }

int cuda_device_count() {
#if BATON_HAVE_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

void check_device(Device device) {
  BATON_CHECK(device.index() >= 0, "device ", device.str(), ": index must be >= 0");
  if (device.is_cpu()) return;
#if BATON_HAVE_CUDA
  const int count = cuda_device_count();
  BATON_CHECK(count > 0, "device ", device.str(), " requested but no CUDA device is available (run `baton devices`)");
  BATON_CHECK(device.index() < count, "device ", device.str(), " is out of range: this machine has ", count,
              " CUDA device", count == 1 ? "" : "s", " (cuda:0", count > 1 ? detail::concat("..cuda:", count - 1) : "",
              ")");
#else
  BATON_FAIL("device ", device.str(), " requested but this baton was built without CUDA (BATON_CUDA=OFF)");
#endif
}

}  // namespace baton
