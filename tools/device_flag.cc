// The --device flag.
#include "tools/device_flag.h"

#include <cstdio>

#include "runtime/core/device_info.h"
#include "runtime/core/error.h"

namespace baton::cli {

Device pick_device(const std::string& name) {
  if (name == "auto") {
    if (cuda_device_count() > 0) {
      std::printf("device: cuda:0 (auto)\n");
      return Device::cuda(0);
    }
    std::printf("device: cpu (auto: no GPU found — %s)\n", query_system_info().cuda_unavailable_reason.c_str());
    return Device::cpu();
  }
  const Device d = Device::parse(name);
  check_device(d);
  std::printf("device: %s\n", d.str().c_str());
  return d;
}

}  // namespace baton::cli
