// Context: everything work on one (device, stream) needs: the stream, cuBLAS and cuDNN handles
// bound to it (created on first use) and a scratch workspace from the device's pool.
#pragma once

#include <cstddef>
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
  void set_workspace_limit(size_t bytes) { workspace_limit_ = bytes; }
  size_t workspace_limit() const { return workspace_limit_; }

  // Scratch memory of at least `bytes`, valid for work issued on this context's stream until the
  // next workspace() call (stream order makes reuse safe). Grows on demand; never shrinks.
  void* workspace(size_t bytes);
  size_t workspace_bytes() const;

 private:
  Stream stream_;
  cublasContext* cublas_ = nullptr;
  cudnnContext* cudnn_ = nullptr;
  bool allow_tf32_ = false;
  bool deterministic_ = false;
  size_t workspace_limit_ = size_t{1} << 30;
  std::shared_ptr<Storage> cublas_workspace_;
  std::shared_ptr<Storage> workspace_;
};

}  // namespace baton
