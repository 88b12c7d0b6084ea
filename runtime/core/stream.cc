// Stream and Event on CUDA devices (cudaStream_t / cudaEvent_t) and CPU devices (in-order, synchronous).
#include "runtime/core/stream.h"

#include "runtime/core/build_config.h"
#include "runtime/core/error.h"
#include "runtime/core/stream_state.h"

#if BATON_HAVE_CUDA
#include "runtime/core/cuda/cuda_check.h"
#endif

namespace baton {
namespace detail {

StreamState::~StreamState() {
#if BATON_HAVE_CUDA
  if (cuda_stream != nullptr) {
    // cudaStreamDestroy returns at once and releases the stream after its pending work.
    log_cuda_failure(cudaStreamDestroy(static_cast<cudaStream_t>(cuda_stream)), "cudaStreamDestroy", device.index());
  }
#endif
}

}  // namespace detail

#if BATON_HAVE_CUDA
namespace {
cudaStream_t cuda_stream_of(const Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }

// The answer of cudaStreamQuery or cudaEventQuery: done (true) or not yet (false, the status cleared);
// any other failure is thrown.
bool finished(cudaError_t status) {
  if (status == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  BATON_CUDA_CHECK(status);
  return true;
}
}  // namespace
#endif

Stream Stream::create(Device device, StreamPriority priority) {
  check_device(device);
  void* handle = nullptr;
#if BATON_HAVE_CUDA
  if (device.is_cuda()) {
    CudaDeviceGuard guard(device.index());
    int least = 0, greatest = 0;  // numerically: greatest is the highest priority (a lower number)
    BATON_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    // low is CUDA's default (the least priority); normal lies between, so that high (communication,
    // copies) goes before normal work and normal before low.
    const int value = priority == StreamPriority::high  ? greatest
                      : priority == StreamPriority::low ? least
                                                        : least + (greatest - least) / 2;
    cudaStream_t stream = nullptr;
    BATON_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, value));
    handle = stream;
  }
#endif
  return Stream(std::make_shared<detail::StreamState>(device, priority, handle));
}

Device Stream::device() const { return state_->device; }
StreamPriority Stream::priority() const { return state_->priority; }
void* Stream::native_handle() const { return state_->cuda_stream; }

void Stream::synchronize() const {
#if BATON_HAVE_CUDA
  if (device().is_cuda()) BATON_CUDA_CHECK(cudaStreamSynchronize(cuda_stream_of(*this)));
#endif
}

bool Stream::query() const {
#if BATON_HAVE_CUDA
  if (device().is_cuda()) return finished(cudaStreamQuery(cuda_stream_of(*this)));
#endif
  return true;
}

void Stream::wait(const Event& event) const {
  if (!event.recorded() || event.device().is_cpu()) return;  // CPU events are complete once recorded
#if BATON_HAVE_CUDA
  if (device().is_cuda()) {
    CudaDeviceGuard guard(device().index());
    BATON_CUDA_CHECK(cudaStreamWaitEvent(cuda_stream_of(*this), static_cast<cudaEvent_t>(event.native_handle()), 0));
  } else {
    event.synchronize();  // a CPU stream runs in the host thread: the host waits
  }
#endif
}

Event::Event(Device device, bool timing) : state_(std::make_unique<detail::EventState>()) {
  check_device(device);
  state_->device = device;
  state_->timing = timing;
#if BATON_HAVE_CUDA
  if (device.is_cuda()) {
    CudaDeviceGuard guard(device.index());
    cudaEvent_t event = nullptr;
    BATON_CUDA_CHECK(cudaEventCreateWithFlags(&event, timing ? cudaEventDefault : cudaEventDisableTiming));
    state_->cuda_event = event;
  }
#endif
}

Event::~Event() {
#if BATON_HAVE_CUDA
  if (state_ && state_->cuda_event != nullptr) {
    detail::log_cuda_failure(cudaEventDestroy(static_cast<cudaEvent_t>(state_->cuda_event)), "cudaEventDestroy",
                             state_->device.index());
  }
#endif
}

Event::Event(Event&&) noexcept = default;
Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Event dying(std::move(*this));  // releases our current event
    state_ = std::move(other.state_);
  }
  return *this;
}

Device Event::device() const { return state_->device; }
bool Event::recorded() const { return state_->recorded; }
void* Event::native_handle() const { return state_->cuda_event; }

void Event::record(const Stream& stream) {
  BATON_CHECK(stream.device() == state_->device, "event on ", state_->device.str(),
              " cannot be recorded on a stream of ", stream.device().str());
#if BATON_HAVE_CUDA
  if (state_->device.is_cuda()) {
    CudaDeviceGuard guard(state_->device.index());
    BATON_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(state_->cuda_event), cuda_stream_of(stream)));
  }
#endif
  state_->cpu_time = std::chrono::steady_clock::now();
  state_->recorded = true;
}

bool Event::query() const {
#if BATON_HAVE_CUDA
  if (state_->device.is_cuda() && state_->recorded) {
    return finished(cudaEventQuery(static_cast<cudaEvent_t>(state_->cuda_event)));
  }
#endif
  return true;
}

void Event::synchronize() const {
#if BATON_HAVE_CUDA
  if (state_->device.is_cuda() && state_->recorded) {
    BATON_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(state_->cuda_event)));
  }
#endif
}

float Event::elapsed_ms(const Event& end) const {
  BATON_CHECK(state_->recorded && end.state_->recorded, "elapsed_ms needs both events recorded");
  BATON_CHECK(state_->device == end.state_->device, "elapsed_ms between events on ", state_->device.str(), " and ",
              end.state_->device.str());
  BATON_CHECK(state_->timing && end.state_->timing, "elapsed_ms needs events created with timing enabled");
#if BATON_HAVE_CUDA
  if (state_->device.is_cuda()) {
    float ms = 0;
    BATON_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(state_->cuda_event),
                                          static_cast<cudaEvent_t>(end.state_->cuda_event)));
    return ms;
  }
#endif
  return std::chrono::duration<float, std::milli>(end.state_->cpu_time - state_->cpu_time).count();
}

}  // namespace baton
