// Shared by the CPU convolution tests: the three backward passes against the float64 reference, the
// data gradient into the caller's (poisoned) tensor, the filter and bias gradients accumulated onto
// random values.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "kernels/conv.h"
#include "kernels/layout.h"
#include "runtime/core/context.h"
#include "tests/kernels/conv_reference.h"
#include "tests/support/test_support.h"

namespace baton::testing {

// dx receives the data gradient; the filter gradient (seed 5) and bias gradient (seed 6) start random.
inline void expect_conv_backward_matches(Context& ctx, const ConvCase& c, const Tensor& x, const Tensor& w,
                                         const Tensor& dy, const Tensor& dx, const ConvReference& ref, double tol) {
  // Row-major values, whatever the tensor's format.
  const auto values = [&](const Tensor& t) {
    return to_doubles(kernels::to_memory_format(ctx, t, MemoryFormat::contiguous), ctx.stream());
  };
  kernels::conv2d_backward_data(ctx, dy, w, c.params, dx);
  EXPECT_TRUE(all_close(values(dx), ref.dx, tol, tol)) << "backward data";

  const Tensor dw = random_tensor(c.w, x.dtype(), ctx.stream(), 5);
  std::vector<double> expected_dw = values(dw);
  for (size_t i = 0; i < expected_dw.size(); ++i) expected_dw[i] += ref.dw[i];
  kernels::conv2d_backward_filter(ctx, x, dy, c.params, dw);
  EXPECT_TRUE(all_close(values(dw), expected_dw, tol, tol)) << "backward filter (accumulated)";

  const Tensor db = random_tensor(Shape{c.w[0]}, x.dtype(), ctx.stream(), 6);
  const std::vector<double> expected_db = plus_bias_grad(values(db), values(dy), dy.shape());
  kernels::conv2d_backward_bias(ctx, dy, db);
  EXPECT_TRUE(all_close(values(db), expected_db, tol, tol)) << "backward bias (accumulated)";
}

}  // namespace baton::testing
