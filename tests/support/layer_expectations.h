// Expectations shared by the layer tests: a backward pass that computes parameter gradients only,
// and the default parameters of PyTorch's Linear and Conv2d.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "runtime/graph/layer.h"

namespace baton::testing {

// Runs layer.backward for the one output gradient `dy` with no input gradient asked for (the
// parameter gradients accumulate into `param_grads`) and expects one, undefined, input gradient.
inline void backward_params_only(const Layer& layer, Context& ctx, const Tensor& dy, std::span<const Tensor> saved,
                                 std::span<const Tensor> params, std::span<const Tensor> param_grads) {
  const std::vector<Tensor> dx = layer.backward({.ctx = ctx,
                                                 .output_grads = std::span(&dy, 1),
                                                 .saved = saved,
                                                 .params = params,
                                                 .param_grads = param_grads,
                                                 .needs_input_grad = {false}});
  ASSERT_EQ(dx.size(), 1u);
  EXPECT_FALSE(dx[0].defined());
}

// Expects PyTorch's Linear / Conv2d parameters: specs "weight" of `weight_shape` (with weight decay)
// and "bias" of `bias_shape` (without), both drawn uniformly from [-bound, bound].
inline void expect_uniform_weight_and_bias(const std::vector<TensorSpec>& specs, const Shape& weight_shape,
                                           const Shape& bias_shape, double bound) {
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "weight");
  EXPECT_EQ(specs[0].shape, weight_shape);
  EXPECT_EQ(specs[0].init.kind, Initializer::Kind::uniform);
  EXPECT_DOUBLE_EQ(specs[0].init.a, -bound);
  EXPECT_DOUBLE_EQ(specs[0].init.b, bound);
  EXPECT_TRUE(specs[0].weight_decay);
  EXPECT_EQ(specs[1].name, "bias");
  EXPECT_EQ(specs[1].shape, bias_shape);
  EXPECT_DOUBLE_EQ(specs[1].init.a, -bound);
  EXPECT_DOUBLE_EQ(specs[1].init.b, bound);
  EXPECT_FALSE(specs[1].weight_decay);
}

}  // namespace baton::testing
