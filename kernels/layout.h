// Layout ops: NCHW <-> NHWC for 4-D tensors of any dtype (elements are moved by size: 1, 2, 4 or
// 8 bytes). Both are batched transposes: per image n, [C, H*W] <-> [H*W, C]. to_memory_format moves
// a tensor between baton's memory formats (runtime/core/memory_format.h) with them.
#pragma once

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// x [N, C, H, W] -> out [N, H, W, C]: out[n, h, w, c] = x[n, c, h, w]. Same dtype.
void nchw_to_nhwc(Context& ctx, const Tensor& x, const Tensor& out);

// x [N, H, W, C] -> out [N, C, H, W]: out[n, c, h, w] = x[n, h, w, c]. Same dtype.
void nhwc_to_nchw(Context& ctx, const Tensor& x, const Tensor& out);

// x in `format`: x itself when already in it (unchecked), the same bytes retagged when they are
// placed alike (same_placement), else a new tensor on x's device, converted on ctx's stream. Any
// dtype, CPU or CUDA.
Tensor to_memory_format(Context& ctx, const Tensor& x, MemoryFormat format);

// Writes src's elements into out (same shape and dtype, any formats) in out's format, on ctx's stream.
void convert_into(Context& ctx, const Tensor& src, const Tensor& out);

// An op's output made by code that writes row-major tensors (the references behind channels-last
// activations): tensor() is out itself when out is row-major or undefined, else a row-major
// temporary that write_back() converts into out. One per call.
class RowMajorOutput {
 public:
  RowMajorOutput(Context& ctx, const Tensor& out);
  const Tensor& tensor() const { return row_major_; }
  void write_back() const;

 private:
  Context& ctx_;
  Tensor out_, row_major_;
};

}  // namespace baton::kernels
