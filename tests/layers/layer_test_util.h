// Helpers of the layer tests: one forward or backward call with everything else empty (layers
// without parameters). Includes the op tests' helpers for EXPECT_ERROR_MENTIONS(text, statement),
// which expects the statement to throw a baton::Error whose message contains `text`.
#pragma once

#include <span>
#include <vector>

#include "runtime/graph/layer.h"
#include "tests/kernels/op_test_support.h"

namespace baton::testing {

inline ForwardResult forward_once(const Layer& layer, Context& ctx, std::span<const Tensor> inputs,
                                  Mode mode = Mode::train, uint64_t seed = 0) {
  return layer.forward(
      {.ctx = ctx, .mode = mode, .inputs = inputs, .params = {}, .buffers = {}, .update_buffers = true, .seed = seed});
}

inline std::vector<Tensor> backward_once(const Layer& layer, Context& ctx, std::span<const Tensor> output_grads,
                                         std::span<const Tensor> saved, std::vector<bool> needs_input_grad) {
  return layer.backward({.ctx = ctx,
                         .output_grads = output_grads,
                         .saved = saved,
                         .params = {},
                         .param_grads = {},
                         .needs_input_grad = std::move(needs_input_grad)});
}

}  // namespace baton::testing
