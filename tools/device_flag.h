// The --device flag: "auto" (a GPU when there is one, else the CPU, saying which and why) or a
// device name checked against this machine.
#pragma once

#include <string>

#include "runtime/core/device.h"

namespace baton::cli {

// Prints the device chosen ("device: cuda:0 (auto)") and returns it; an unknown or absent device is
// a baton::Error naming it.
Device pick_device(const std::string& name);

}  // namespace baton::cli
