// Shared by the kernel tests: the floating dtypes, copies of test inputs to a device (optionally as
// a view off 16-byte alignment), raw bytes and exact values for bit-for-bit comparisons, the
// fixture of the CUDA tests, and
// EXPECT_ERROR_MENTIONS(text, statement), which expects the statement to throw a baton::Error
// whose message contains `text`.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"
#include "tests/support/test_support.h"

namespace baton::testing {

inline constexpr DType kFloatingDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

// An uninitialised tensor on the stream's device. With `offset` it is a view starting one element
// into a larger buffer, so it is not 16-byte aligned (vectorised kernels must take their scalar path).
inline Tensor empty_view(const Shape& shape, DType dtype, const Stream& stream, bool offset = false) {
  const Tensor buffer = Tensor::empty(Shape{shape.numel() + (offset ? 1 : 0)}, dtype, stream);
  return buffer.slice(offset ? 1 : 0, buffer.numel()).reshape(shape);
}

// A copy of t on the stream's device (see empty_view for `offset`).
inline Tensor copy_to(const Tensor& t, const Stream& stream, bool offset = false) {
  Tensor view = empty_view(t.shape(), t.dtype(), stream, offset);
  view.copy_from(t, stream);
  return view;
}

// The tensor's bytes on the host (synchronises the stream).
inline std::vector<unsigned char> bytes_of(const Tensor& t, const Stream& stream) {
  const Tensor host = t.to(Device::cpu(), stream);
  stream.synchronize();
  std::vector<unsigned char> bytes(host.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), host.data_ptr(), bytes.size());
  return bytes;
}

// actual[i] and expected[i] are the same number for every i: equal with the same sign (so +0 and
// -0 differ, inf matches inf), or both NaN. On failure: how many differ and the first one.
inline ::testing::AssertionResult identical_values(const std::vector<double>& actual,
                                                   const std::vector<double>& expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << actual.size() << " vs " << expected.size();
  }
  size_t failures = 0, first = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const bool same = (std::isnan(actual[i]) && std::isnan(expected[i])) ||
                      (actual[i] == expected[i] && std::signbit(actual[i]) == std::signbit(expected[i]));
    if (!same && failures++ == 0) first = i;
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failures << " of " << actual.size() << " elements differ; the first at index "
                                       << first << ": actual " << actual[first] << ", expected " << expected[first];
}

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

// Fixture of the CUDA kernel tests: skipped without a GPU; a CPU context for the reference results
// and a CUDA one.
class CudaOpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BATON_REQUIRE_GPU();
    gpu = std::make_unique<Context>(Device::cuda());
  }

  const Stream& gs() const { return gpu->stream(); }
  // A tensor on ctx's device filled with poison (see empty_view for `offset`).
  static Tensor poisoned(const Context& ctx, const Shape& shape, DType dtype, bool offset = false) {
    const Tensor t = empty_view(shape, dtype, ctx.stream(), offset);
    poison(t, ctx.stream());
    return t;
  }

  Context cpu{Device::cpu()};
  std::unique_ptr<Context> gpu;
};

}  // namespace baton::testing

#define EXPECT_ERROR_MENTIONS(text, ...)                                                                         \
  do {                                                                                                           \
    const std::string baton_message_ = ::baton::testing::error_message([&] { __VA_ARGS__; });                    \
    EXPECT_NE(baton_message_.find(text), std::string::npos)                                                      \
        << "statement: " #__VA_ARGS__ "\nmessage: " << baton_message_ << "\nexpected it to contain: " << (text); \
  } while (0)
