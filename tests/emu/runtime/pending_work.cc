// Stream work that completes after its enqueue (collectives of the emulated NCCL waiting for their
// peers): how streams and events inherit it, and how host threads wait for it with the runtime lock
// released, so that the threads of the other ranks can enqueue their parts. A wait that would never
// end on a GPU is a fatal error after BATON_EMU_HANG_SECONDS instead of a hung test.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <string>

#include "device_memory.h"
#include "runtime_state.h"

namespace baton_emu {
namespace {

std::condition_variable_any& progress() {
  static std::condition_variable_any condition;
  return condition;
}

const PendingWork* first_incomplete(const std::vector<PendingWorkHandle>& pending) {
  for (const PendingWorkHandle& work : pending) {
    if (!work->done) return work.get();
  }
  return nullptr;
}

}  // namespace

void inherit_pending(std::vector<PendingWorkHandle>& into, const std::vector<PendingWorkHandle>& from) {
  std::erase_if(into, [](const PendingWorkHandle& work) { return work->done; });
  for (const PendingWorkHandle& work : from) {
    if (!work->done && std::find(into.begin(), into.end(), work) == into.end()) into.push_back(work);
  }
}

bool has_pending(const std::vector<PendingWorkHandle>& pending) { return first_incomplete(pending) != nullptr; }

void notify_progress() { progress().notify_all(); }

void wait_until(const std::function<bool()>& ready, const std::function<std::string()>& why, const char* api) {
  const auto limit = std::chrono::duration<double>(settings().hang_seconds);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(limit);
  while (!ready()) {
    if (progress().wait_until(runtime_lock(), deadline) == std::cv_status::timeout && !ready()) {
      fatal(std::string(api) + ": would hang: " + why() + " (waited " + std::to_string(settings().hang_seconds) +
            " s, BATON_EMU_HANG_SECONDS)");
    }
  }
}

void wait_for_pending(StreamState& stream, const char* api) {
  if (!has_pending(stream.pending)) {
    stream.pending.clear();
    return;
  }
  // The stream may be destroyed while the lock is released: wait on a copy of its list.
  const std::vector<PendingWorkHandle> pending = stream.pending;
  wait_until([&] { return !has_pending(pending); },
             [&] {
               const PendingWork* work = first_incomplete(pending);
               return work != nullptr && work->describe ? work->describe() : std::string("pending work");
             },
             api);
  std::erase_if(stream.pending, [](const PendingWorkHandle& work) { return work->done; });
}

void wait_for_stream(cudaStream_t stream, const char* api) { wait_for_pending(resolve_stream(stream, api), api); }

PendingWorkHandle enqueue_pending(cudaStream_t stream, int device, const char* api,
                                  const std::vector<Access>& accesses) {
  StreamState& s = resolve_stream(stream, api);
  if (s.device != device) {
    fatal(std::string(api) + ": called with " + s.name() + " but the communicator belongs to device " +
          std::to_string(device));
  }
  begin_operation(s);
  for (const Access& access : accesses) check_device_access(s, access.data, access.bytes, api, access.what, true);
  auto work = std::make_shared<PendingWork>();
  s.pending.push_back(work);
  return work;
}

void complete_pending(PendingWork& work, bool failed) {
  work.done = true;
  work.failed = failed;
  notify_progress();
}

void with_device_memory_open(const std::function<void()>& work) {
  DeviceMemoryOpen open;
  work();
}

}  // namespace baton_emu
