// Copies of tensors between devices (see device_copy.h).
#include "parallel/replicas/device_copy.h"

namespace baton::parallel {

void copy_tensor(Tensor dst, const Tensor& src, Context& dst_ctx) {
  if (dst.device().is_cuda() || !src.device().is_cuda()) {
    dst.copy_from(src, dst_ctx.stream());
    return;
  }
  const Stream stream = Stream::create(src.device());
  dst.copy_from(src, stream);
  stream.synchronize();
}

Tensor on_device_of(const Tensor& t, Context& ctx) {
  if (t.device() == ctx.device()) return t;
  Tensor copy = Tensor::empty(t.shape(), t.dtype(), ctx.stream(), t.format());
  copy_tensor(copy, t, ctx);
  return copy;
}

}  // namespace baton::parallel
