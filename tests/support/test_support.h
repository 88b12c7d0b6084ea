// Test helpers: GPU presence and skips, random inputs (never all zeros), poisoned outputs, and
// tensor comparison with dtype-aware tolerances that reports the worst element.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace baton::testing {

// True when a CUDA build runs on a machine with at least one GPU.
bool gpu_available();
// Why GPU tests are skipped here ("no CUDA device: cudaErrorNoDevice ...").
std::string no_gpu_reason();

// Skips the current test, with the reason, when no GPU can run it.
#define BATON_REQUIRE_GPU()                                                                   \
  do {                                                                                        \
    if (!::baton::testing::gpu_available()) GTEST_SKIP() << ::baton::testing::no_gpu_reason(); \
  } while (0)

// Uniform random values in [low, high) converted to `dtype`, generated on the host from `seed`
// (the same values on every device), copied to the stream's device. Never all zeros.
Tensor random_tensor(const Shape& shape, DType dtype, const Stream& stream, uint64_t seed, double low = -1.0,
                     double high = 1.0);
// The same values as host doubles (after conversion to `dtype`), for references.
std::vector<double> random_values(int64_t count, DType dtype, uint64_t seed, double low = -1.0, double high = 1.0);

// Fills a tensor with a value no kernel would produce (NaN for floating dtypes, a fixed odd
// pattern for integers) so an element the kernel fails to write is caught by the comparison.
void poison(const Tensor& t, const Stream& stream);

// Any tensor's elements as doubles (copied to the host; synchronises the stream).
std::vector<double> to_doubles(const Tensor& t, const Stream& stream);
// A tensor of `dtype` on the stream's device holding `values` (converted, rounding to nearest).
Tensor from_doubles(const std::vector<double>& values, const Shape& shape, DType dtype, const Stream& stream);

// Relative tolerance suited to results computed in `dtype` (f64 1e-12, f32 1e-5, f16 2e-3, bf16 1e-2).
double default_tolerance(DType dtype);

// |actual - expected| <= atol + rtol * |expected| for every element; NaN never passes. On failure
// the message names the worst element (index, both values, error) and how many failed.
::testing::AssertionResult all_close(const std::vector<double>& actual, const std::vector<double>& expected,
                                     double rtol, double atol);
::testing::AssertionResult tensors_close(const Tensor& actual, const Tensor& expected, const Stream& stream,
                                         double rtol, double atol);
// With default_tolerance(actual.dtype()) for both rtol and atol.
::testing::AssertionResult tensors_close(const Tensor& actual, const Tensor& expected, const Stream& stream);

}  // namespace baton::testing
