// Storage: one allocation (device or host memory) shared by the tensors that view it.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/core/device.h"
#include "runtime/core/stream.h"

namespace baton {

enum class HostMemory { pageable, pinned };

class Storage {
 public:
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();  // returns the memory to its allocator, ordered after work on the streams that used it

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  bool pinned() const { return pinned_; }
  // The stream the memory was allocated on (and is freed on); empty for host memory.
  const std::shared_ptr<detail::StreamState>& stream() const { return stream_; }
  // Declares that `stream` (another CUDA stream, on this device or a peer) uses this memory: the
  // free waits for the work issued on it up to the moment the storage is released.
  void record_stream(const Stream& stream);

  // Device memory: CPU devices get aligned host memory; CUDA devices get memory from the device's
  // stream-ordered pool, usable on `stream` at once and on other streams after an event.
  static std::shared_ptr<Storage> allocate(size_t bytes, const Stream& stream);
  // Host memory on cpu:0; pinned memory needs a CUDA driver and falls back to pageable without one.
  static std::shared_ptr<Storage> allocate_host(size_t bytes, HostMemory kind);

 private:
  Storage() = default;

  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_;
  bool pinned_ = false;
  bool counted_ = false;  // added to the device's memory counters (only once the memory exists)
  std::shared_ptr<detail::StreamState> stream_;
  std::mutex mutex_;
  std::vector<Stream> other_streams_;
};

}  // namespace baton
