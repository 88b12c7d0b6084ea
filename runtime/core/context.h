// Context: everything work on one (device, stream) needs: the stream, cuBLAS and cuDNN handles
// bound to it (created on first use), a scratch workspace from the device's pool, and a small
// persistent buffer where device work records failed checks for the host to read later.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/core/device.h"
#include "runtime/core/storage.h"
#include "runtime/core/stream.h"

struct cublasContext;  // cublasHandle_t is cublasContext*
struct cudnnContext;   // cudnnHandle_t is cudnnContext*

namespace baton {

class Context {
 public:
  // A context with a new stream of its own on `device`.
  explicit Context(Device device, StreamPriority priority = StreamPriority::normal);
  // A context for an existing stream.
  explicit Context(Stream stream);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Device device() const { return stream_.device(); }
  const Stream& stream() const { return stream_; }
  void synchronize() const { stream_.synchronize(); }

  // cuBLAS / cuDNN handles bound to this context's stream (CUDA devices only).
  cublasContext* cublas();
  cudnnContext* cudnn();

  // Numerics and memory policy for library calls made with this context (cuDNN, cuBLAS):
  // TF32 tensor-core math for float32 convolutions and matrix products (default off: exact float32),
  // deterministic algorithms only (default off), and the most workspace one call may take.
  void set_allow_tf32(bool allow) { allow_tf32_ = allow; }
  bool allow_tf32() const { return allow_tf32_; }
  void set_deterministic(bool deterministic) { deterministic_ = deterministic; }
  bool deterministic() const { return deterministic_; }
  // CPU float32 convolutions write channels-last activations, which batch norm, activations and
  // residual adds keep (docs/cpu.md; off by default, `baton train --channels-last`,
  // TrainConfig::channels_last). CUDA contexts ignore it.
  void set_channels_last(bool channels_last) { channels_last_ = channels_last; }
  bool channels_last() const { return channels_last_; }
  void set_workspace_limit(size_t bytes) { workspace_limit_ = bytes; }
  size_t workspace_limit() const { return workspace_limit_; }

  // Scratch memory of at least `bytes`, valid for work issued on this context's stream until the
  // next workspace() call (stream order makes reuse safe). Grows on demand; never shrinks.
  void* workspace(size_t bytes);
  size_t workspace_bytes() const;

  // Deferred checks. Device work may check its inputs on the device and record a failure in this
  // small persistent buffer (kDeviceCheckBytes, zero-initialised, allocated on this context's
  // stream on first use and ordered on it) instead of making the host wait to read the verdict; the
  // host reads it at a synchronisation it makes anyway. The core only holds the bytes: their meaning
  // belongs to the ops that write them (kernels/deferred_checks.h reads and reports them).
  static constexpr size_t kDeviceCheckBytes = 64;
  void* device_checks();
  // Whether device_checks() has been allocated (no check has run on this context otherwise).
  bool has_device_checks() const { return device_checks_ != nullptr; }
  // Debugging: ops that check on the device report a failure themselves, before returning (the host
  // synchronises in each such op). Starts as the environment variable BATON_SYNC_CHECKS says
  // (1: on; 0 or unset: off; anything else is an error naming the variable).
  void set_sync_checks(bool sync) { sync_checks_ = sync; }
  bool sync_checks() const { return sync_checks_; }
  // A number that a failed device check records with the failure (-1 until set): what the work
  // issued from now on belongs to (a pipeline sets the micro-batch), so that the late report can
  // name it.
  void set_check_tag(int64_t tag) { check_tag_ = tag; }
  int64_t check_tag() const { return check_tag_; }

 private:
  Stream stream_;
  [[maybe_unused]] cublasContext* cublas_ = nullptr;  // unused in CPU-only builds
  [[maybe_unused]] cudnnContext* cudnn_ = nullptr;
  bool allow_tf32_ = false;
  bool channels_last_ = false;
  bool deterministic_ = false;
  size_t workspace_limit_ = size_t{1} << 30;
  bool sync_checks_;
  int64_t check_tag_ = -1;
  std::shared_ptr<Storage> cublas_workspace_;
  std::shared_ptr<Storage> workspace_;
  std::shared_ptr<Storage> device_checks_;
};

}  // namespace baton
