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

  // Scratch memory of at least `bytes`, valid for work issued on this context's stream until the
  // next workspace() call (stream order makes reuse safe). Grows on demand; never shrinks.
  void* workspace(size_t bytes);
  size_t workspace_bytes() const;

 private:
  Stream stream_;
  cublasContext* cublas_ = nullptr;
  cudnnContext* cudnn_ = nullptr;
  std::shared_ptr<Storage> cublas_workspace_;
  std::shared_ptr<Storage> workspace_;
};

}  // namespace baton
