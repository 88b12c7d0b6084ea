// Fixture of CPU op tests: a CPU context, poisoned outputs, random inputs and host values.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"
#include "tests/support/test_support.h"

namespace baton::testing {

class CpuOpTest : public ::testing::Test {
 protected:
  // An output tensor filled with poison.
  Tensor poisoned(const Shape& shape, DType dtype) {
    Tensor t = Tensor::empty(shape, dtype, ctx);
    poison(t, ctx.stream());
    return t;
  }
  Tensor random(const Shape& shape, DType dtype, uint64_t seed, double low = -1.0, double high = 1.0) {
    return random_tensor(shape, dtype, ctx.stream(), seed, low, high);
  }
  // The tensor's values (none for an undefined tensor).
  std::vector<double> values(const Tensor& t) {
    if (!t.defined()) return {};
    return to_doubles(t, ctx.stream());
  }

  Context ctx{Device::cpu()};
};

}  // namespace baton::testing
