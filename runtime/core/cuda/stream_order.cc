// Pooled, timing-free events per device for ordering streams: taken, recorded, waited on and given
// back at once (a wait captures the event's state when it is issued, so re-recording is safe).
#include "runtime/core/cuda/stream_order.h"

#include <memory>
#include <mutex>
#include <vector>

#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/device.h"

namespace baton::detail {
namespace {

struct EventPool {
  std::mutex mutex;
  std::vector<cudaEvent_t> free;
};

// One pool per device. Never destroyed: events outlive every stream that might still wait on them,
// and CUDA may already be shut down when static objects are destroyed (c10 leaks its pools too).
EventPool& pool(int device) {
  static auto* const pools = [] {
    auto* all = new std::vector<std::unique_ptr<EventPool>>();
    for (int d = 0; d < cuda_device_count(); ++d) all->push_back(std::make_unique<EventPool>());
    return all;
  }();
  BATON_CHECK(device >= 0 && device < static_cast<int>(pools->size()), "no CUDA device ", device);
  return *(*pools)[static_cast<size_t>(device)];
}

// Records `recorded` into a pooled event of its device and makes `waiting` wait for it.
cudaError_t record_and_wait(cudaStream_t waiting, cudaStream_t recorded, int recorded_device) {
  EventPool& events = pool(recorded_device);
  cudaEvent_t event = nullptr;
  {
    std::lock_guard<std::mutex> lock(events.mutex);
    if (!events.free.empty()) {
      event = events.free.back();
      events.free.pop_back();
    }
  }
  CudaDeviceGuard guard(recorded_device, std::nothrow);  // events are created and recorded on their device
  cudaError_t status = cudaSuccess;
  if (event == nullptr) status = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (status != cudaSuccess) return status;
  status = cudaEventRecord(event, recorded);
  if (status == cudaSuccess) status = cudaStreamWaitEvent(waiting, event, 0);
  std::lock_guard<std::mutex> lock(events.mutex);
  events.free.push_back(event);
  return status;
}

}  // namespace

void order_after(cudaStream_t waiting, cudaStream_t recorded, int recorded_device) {
  BATON_CUDA_CHECK(record_and_wait(waiting, recorded, recorded_device));
}

bool order_after_noexcept(cudaStream_t waiting, cudaStream_t recorded, int recorded_device) noexcept {
  try {
    return log_cuda_failure(record_and_wait(waiting, recorded, recorded_device), "ordering streams with an event",
                            recorded_device);
  } catch (...) {  // the pool could not be reached (out of memory, no such device): fall back to the host
    return log_cuda_failure(cudaStreamSynchronize(recorded), "cudaStreamSynchronize", recorded_device);
  }
}

}  // namespace baton::detail
