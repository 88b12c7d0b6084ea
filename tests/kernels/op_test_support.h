// The fixture of the CUDA kernel tests: skipped without a GPU; a CPU context for the reference
// results and a CUDA one. The general helpers (poisoned outputs, views off 16-byte alignment, raw
// bytes, EXPECT_ERROR_MENTIONS) are in tests/support/test_support.h.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "runtime/core/context.h"
#include "tests/support/test_support.h"

namespace baton::testing {

class CudaOpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BATON_REQUIRE_GPU();
    gpu = std::make_unique<Context>(Device::cuda());
  }

  const Stream& gs() const { return gpu->stream(); }

  Context cpu{Device::cpu()};
  std::unique_ptr<Context> gpu;
};

}  // namespace baton::testing
