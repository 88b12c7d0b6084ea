// What the channels-last kernel tests share: a CPU context, tensors converted between memory formats,
// poisoned outputs in either format, and any tensor's values in row-major order.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "kernels/layout.h"
#include "runtime/core/context.h"
#include "tests/support/test_support.h"

namespace baton::testing {

class ChannelsLastTest : public ::testing::Test {
 protected:
  Tensor in_format(const Tensor& t, MemoryFormat format) { return kernels::to_memory_format(ctx, t, format); }
  Tensor channels_last(const Tensor& t) { return in_format(t, MemoryFormat::channels_last); }
  // Uninitialised but for poison, so an element an op fails to write shows.
  Tensor poisoned(const Shape& shape, DType dtype, MemoryFormat format) {
    const Tensor t = Tensor::empty(shape, dtype, ctx.stream(), format);
    poison(t, ctx.stream());
    return t;
  }
  // Row-major values, whatever the tensor's format.
  std::vector<double> values(const Tensor& t) {
    return to_doubles(in_format(t, MemoryFormat::contiguous), ctx.stream());
  }

  Context ctx{Device::cpu()};
};

}  // namespace baton::testing
