// Test helpers: GPU presence and skips, random inputs (never all zeros), poisoned outputs, views
// off 16-byte alignment, raw bytes and exact values for bit-for-bit comparisons, tensor comparison
// with dtype-aware tolerances that reports the worst element, and
// EXPECT_ERROR_MENTIONS(text, statement), which expects the statement to throw a baton::Error whose
// message contains `text`.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/build_config.h"
#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace baton::testing {

// The floating dtypes, which every floating op accepts.
inline constexpr DType kFloatingDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

// True when a CUDA build runs on a machine with at least one GPU.
bool gpu_available();
// Why GPU tests are skipped here ("no CUDA device: cudaErrorNoDevice ...").
std::string no_gpu_reason();

// Skips the current test, with the reason, when no GPU can run it.
#define BATON_REQUIRE_GPU()                                                                    \
  do {                                                                                         \
    if (!::baton::testing::gpu_available()) GTEST_SKIP() << ::baton::testing::no_gpu_reason(); \
  } while (0)

// Skips the current test in an EMU build (BATON_CUDA=EMU, the emulated GPU) with the reason it cannot
// be meaningful there (timings, bit-exact libdevice transcendentals, FMA contraction); the list of
// such tests is in docs/emulated-gpu.md and is kept short.
#define BATON_SKIP_IN_EMU(reason)                                                                \
  do {                                                                                           \
    if (BATON_CUDA_EMULATED) GTEST_SKIP() << "not meaningful on the emulated GPU: " << (reason); \
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

// An uninitialised tensor on the stream's device. With `offset` it is a view starting one element
// into a larger buffer, so it is not 16-byte aligned (vectorised kernels must take their scalar path).
Tensor empty_view(const Shape& shape, DType dtype, const Stream& stream, bool offset = false);
// empty_view filled with poison.
Tensor poisoned(const Shape& shape, DType dtype, const Stream& stream, bool offset = false);
// A copy of t on the stream's device (see empty_view for `offset`).
Tensor copy_to(const Tensor& t, const Stream& stream, bool offset = false);

// Any tensor's elements as doubles (copied to the host; synchronises the stream).
std::vector<double> to_doubles(const Tensor& t, const Stream& stream);
// A tensor of `dtype` on the stream's device holding `values` (converted, rounding to nearest).
Tensor from_doubles(const std::vector<double>& values, const Shape& shape, DType dtype, const Stream& stream);

// The tensor's bytes on the host (synchronises the stream; a CPU tensor is read in place, so any
// stream will do for it).
std::vector<unsigned char> bytes_of(const Tensor& t, const Stream& stream);

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

// actual[i] and expected[i] are the same number for every i: equal with the same sign (so +0 and
// -0 differ, inf matches inf), or both NaN. On failure: how many differ and the first one.
::testing::AssertionResult identical_values(const std::vector<double>& actual, const std::vector<double>& expected);

// The message of the baton::Error that fn() throws; a test failure and "" when it throws none.
template <typename Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a baton::Error";
  return "";
}

}  // namespace baton::testing

#define EXPECT_ERROR_MENTIONS(text, ...)                                                                         \
  do {                                                                                                           \
    const std::string baton_message_ = ::baton::testing::error_message([&] { __VA_ARGS__; });                    \
    EXPECT_NE(baton_message_.find(text), std::string::npos)                                                      \
        << "statement: " #__VA_ARGS__ "\nmessage: " << baton_message_ << "\nexpected it to contain: " << (text); \
  } while (0)
