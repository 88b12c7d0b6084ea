// Layer tests: a float64 finite-difference gradient check on the CPU, and a CUDA-against-CPU check
// of forward and backward. Both build random parameters from the layer's specs and a random linear
// loss L = sum_o <w_o, output_o>, so every output element's gradient is exercised.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "runtime/graph/layer.h"

namespace baton::testing {

struct GradCheckOptions {
  double step = 1e-6;              // central difference step
  double tolerance = 1e-6;         // on |analytic - numeric| / max(|analytic|, |numeric|, 1)
  int max_checks_per_tensor = 60;  // elements checked per input / parameter (all when fewer)
  Mode mode = Mode::train;
  uint64_t seed = 1;
  // A point is a kink (skipped) when the one-sided slopes differ by more than this, relative to
  // max(|slope|, 1): ReLU at 0, max-pool ties. A check where most points are kinks fails.
  double kink_threshold = 1e-4;
};

// `inputs` live on the CPU; floating inputs must be f64 (integer inputs such as labels are passed
// as they are). Checks every differentiable input and every parameter.
::testing::AssertionResult check_gradients(const Layer& layer, const std::vector<Tensor>& inputs,
                                           const GradCheckOptions& options = {});

struct DeviceCheckOptions {
  double rtol = 1e-4;
  double atol = 1e-5;
  Mode mode = Mode::train;
  uint64_t seed = 1;
};

// Runs forward and backward on cpu:0 and cuda:0 with the same `inputs` (CPU tensors, floating
// ones f32 or another dtype the layer supports), parameters, buffers and output gradients, and
// compares outputs, input gradients, parameter gradients and updated buffers.
::testing::AssertionResult check_cuda_matches_cpu(const Layer& layer, const std::vector<Tensor>& inputs,
                                                  const DeviceCheckOptions& options = {});

}  // namespace baton::testing
