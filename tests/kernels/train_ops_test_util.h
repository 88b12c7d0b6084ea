// Helpers of the training-op tests: expecting a baton::Error that names an argument, raw bytes of
// a tensor, and unaligned views.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace baton::testing {

// Runs fn and expects a baton::Error whose message contains `needle` (e.g. "'labels'").
template <typename Fn>
void expect_error_naming(Fn&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected a baton::Error naming " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

// The tensor's bytes, copied to the host (synchronises the stream).
inline std::vector<uint8_t> host_bytes(const Tensor& t, const Stream& stream) {
  Tensor host = t.device().is_cpu() ? t : t.to(Device::cpu(), stream);
  stream.synchronize();
  std::vector<uint8_t> bytes(t.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), host.data_ptr(), bytes.size());
  return bytes;
}

// A tensor of `shape` that starts one element into its storage, so it is not 16-byte aligned.
inline Tensor unaligned_empty(const Shape& shape, DType dtype, const Stream& stream) {
  return Tensor::empty(Shape{shape.numel() + 1}, dtype, stream).slice(1, shape.numel() + 1).reshape(shape);
}

}  // namespace baton::testing
