// Kernel launches and library work on a stream: the checks CUDA makes at a launch (the stream's
// device is current, block/grid/shared-memory limits of an H100) with CUDA's error codes, the
// emulator's checks of pointer arguments and accesses, then the work itself with device memory open.
#include "baton_emu/launch.h"

#include <string>

#include "baton_emu/runtime_api.h"
#include "runtime_state.h"
#include "simt_scheduler.h"

namespace baton_emu {
namespace {

std::string configuration_problem(const LaunchConfig& c) {
  const dim3 b = c.block, g = c.grid;
  if (b.x == 0 || b.y == 0 || b.z == 0 || g.x == 0 || g.y == 0 || g.z == 0) return "a zero grid or block dimension";
  if (b.x > 1024 || b.y > 1024 || b.z > 64) return "a block dimension above the device's (1024, 1024, 64)";
  if (uint64_t{b.x} * b.y * b.z > 1024) return "more than 1024 threads per block";
  if (g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535)
    return "a grid dimension above the device's (2^31-1, 65535, 65535)";
  return "";
}

std::string dims(dim3 d) {
  std::string text = "(";
  text += std::to_string(d.x);
  text += ',';
  text += std::to_string(d.y);
  text += ',';
  text += std::to_string(d.z);
  return text + ")";
}

std::string launch_site(const char* kernel, const char* file, int line) {
  std::string site = "kernel ";
  site += kernel;
  site += " launched at ";
  site += file;
  site += ':';
  site += std::to_string(line);
  return site;
}

}  // namespace

Launch::Launch(const char* kernel, const char* file, int line, const LaunchConfig& config)
    : site_(launch_site(kernel, file, line)), config_(config) {
  runtime_lock().lock();
  if (inside_kernel()) fatal(site_ + ": a launch from inside a kernel (dynamic parallelism is not emulated)");
  StreamState& stream = resolve_stream(config.stream, site_.c_str());
  if (stream.device != current_device_index()) {
    fail(cudaErrorInvalidResourceHandle, site_.c_str(),
         "launched on " + stream.name() + " while device " + std::to_string(current_device_index()) + " is current");
    return;
  }
  if (const std::string problem = configuration_problem(config); !problem.empty()) {
    fail(cudaErrorInvalidConfiguration, site_.c_str(),
         "grid " + dims(config.grid) + ", block " + dims(config.block) + ": " + problem);
    return;
  }
  if (config.shared_bytes > kSharedBytesPerBlock) {
    fail(cudaErrorInvalidValue, site_.c_str(),
         std::to_string(config.shared_bytes) + " bytes of dynamic shared memory, above the " +
             std::to_string(kSharedBytesPerBlock) + " bytes per block");
    return;
  }
  begin_operation(stream);
  wait_for_pending(stream, site_.c_str());
  stream_ = &stream;
  ok_ = true;
}

Launch::~Launch() { runtime_lock().unlock(); }

void Launch::check_pointer_argument(const void* pointer, int index) {
  const std::string what = "argument " + std::to_string(index);
  check_device_access(*static_cast<StreamState*>(stream_), pointer, 0, site_.c_str(), what.c_str(), true);
}

void Launch::run(ThreadBody body) {
  DeviceMemoryOpen open;
  run_grid(site_.c_str(), config_, body);
}

int stream_device(cudaStream_t stream, const char* api) {
  RuntimeLock lock(runtime_lock());
  return resolve_stream(stream, api).device;
}

void run_on_stream(cudaStream_t stream, const char* api, std::initializer_list<Access> accesses,
                   const std::function<void()>& work) {
  RuntimeLock lock(runtime_lock());
  if (inside_kernel()) fatal(std::string(api) + " called from inside a kernel");
  StreamState& s = resolve_stream(stream, api);
  if (s.device != current_device_index()) {
    fatal(std::string(api) + ": called with " + s.name() + " while device " + std::to_string(current_device_index()) +
          " is current (set the stream's device current first)");
  }
  begin_operation(s);
  wait_for_pending(s, api);
  for (const Access& access : accesses) check_device_access(s, access.data, access.bytes, api, access.what, true);
  DeviceMemoryOpen open;
  work();
}

}  // namespace baton_emu
