// The live handles of an emulated library (cuBLAS, cuDNN): made on the current device, checked on
// every call (a destroyed handle or one used on another device is a fatal error), destroyed.
#pragma once

#include <mutex>
#include <set>
#include <string>

#include "baton_emu/runtime_api.h"

namespace baton_emu {

// `Context` is the library's handle struct, with the `device` it was made on.
template <typename Context>
class HandleRegistry {
 public:
  // `library` names the library in messages ("cuBLAS"), `create_api` the call that makes handles.
  HandleRegistry(const char* library, const char* create_api) : library_(library), create_api_(create_api) {}

  Context* create() {
    auto* context = new Context;
    context->device = current_device();
    std::lock_guard<std::mutex> guard(lock_);
    live_.insert(context);
    return context;
  }

  void destroy(Context* context) {
    {
      std::lock_guard<std::mutex> guard(lock_);
      live_.erase(context);
    }
    delete context;
  }

  // A fatal error naming `api` unless `handle` (not null) is live and its device is current.
  void check_live_on_current_device(const Context* handle, const char* api) {
    {
      std::lock_guard<std::mutex> guard(lock_);
      if (live_.count(handle) == 0) {
        fatal(std::string(api) + ": the " + library_ + " handle was destroyed (or never created by " + create_api_ +
              ")");
      }
    }
    const int current = current_device();
    if (current != handle->device) {
      fatal(std::string(api) + ": the " + library_ + " handle belongs to device " + std::to_string(handle->device) +
            " (current at " + create_api_ + ") but device " + std::to_string(current) + " is current");
    }
  }

 private:
  const char* library_;
  const char* create_api_;
  std::mutex lock_;
  std::set<const Context*> live_;
};

}  // namespace baton_emu
