// Test support: GPU availability, seeded random and poisoned tensors, copies to host as doubles and
// the per-dtype tolerances the op tests compare with.
#include "tests/support/test_support.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "runtime/core/device_info.h"
#include "runtime/core/fill_pattern.h"
#include "runtime/core/philox.h"

// AddressSanitizer builds (docs/sanitizers.md) read their defaults from here: an allocation the
// allocator cannot serve returns null, as without ASan, so the out-of-memory tests see baton's own
// error instead of ASan stopping the program.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace baton::testing {

bool gpu_available() { return cuda_device_count() > 0; }

std::string no_gpu_reason() {
  const SystemInfo info = query_system_info();
  return "no GPU: " + info.cuda_unavailable_reason;
}

std::vector<double> random_values(int64_t count, DType dtype, uint64_t seed, double low, double high) {
  std::vector<double> values(static_cast<size_t>(count));
  bool any_nonzero = false;
  unsigned char bits[8];
  for (int64_t i = 0; i < count; ++i) {
    double v = low + (high - low) * philox::to_uniform_double(philox::uint32_at(seed, static_cast<uint64_t>(i)));
    if (!is_floating(dtype)) v = std::floor(v);
    // Round through the dtype so the host reference sees exactly what the device holds.
    const uint64_t pattern = detail::element_bits(v, dtype);
    std::memcpy(bits, &pattern, sizeof(bits));
    values[static_cast<size_t>(i)] = detail::element_value(bits, dtype);
    any_nonzero = any_nonzero || values[static_cast<size_t>(i)] != 0.0;
  }
  if (count > 0 && !any_nonzero) values[0] = 1.0;  // never all zeros
  return values;
}

Tensor from_doubles(const std::vector<double>& values, const Shape& shape, DType dtype, const Stream& stream) {
  BATON_CHECK(static_cast<int64_t>(values.size()) == shape.numel(), "from_doubles: ", values.size(),
              " values for shape ", shape.str());
  Tensor host = Tensor::empty_host(shape, dtype);
  auto* bytes = static_cast<unsigned char*>(host.data_ptr());
  const size_t esize = dtype_size(dtype);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint64_t pattern = detail::element_bits(values[i], dtype);
    std::memcpy(bytes + i * esize, &pattern, esize);
  }
  if (stream.device().is_cpu()) return host;
  return host.to(stream.device(), stream);
}

Tensor random_tensor(const Shape& shape, DType dtype, const Stream& stream, uint64_t seed, double low, double high) {
  return from_doubles(random_values(shape.numel(), dtype, seed, low, high), shape, dtype, stream);
}

void poison(const Tensor& t, const Stream& stream) {
  Tensor view = t;
  view.fill(is_floating(t.dtype()) ? std::nan("") : 77.0, stream);
}

Tensor empty_view(const Shape& shape, DType dtype, const Stream& stream, bool offset) {
  const Tensor buffer = Tensor::empty(Shape{shape.numel() + (offset ? 1 : 0)}, dtype, stream);
  return buffer.slice(offset ? 1 : 0, buffer.numel()).reshape(shape);
}

Tensor poisoned(const Shape& shape, DType dtype, const Stream& stream, bool offset) {
  const Tensor t = empty_view(shape, dtype, stream, offset);
  poison(t, stream);
  return t;
}

Tensor copy_to(const Tensor& t, const Stream& stream, bool offset) {
  Tensor view = empty_view(t.shape(), t.dtype(), stream, offset);
  view.copy_from(t, stream);
  return view;
}

std::vector<unsigned char> bytes_of(const Tensor& t, const Stream& stream) {
  const Tensor host = t.device().is_cpu() ? t : t.to(Device::cpu(), stream);
  stream.synchronize();
  std::vector<unsigned char> bytes(host.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), host.data_ptr(), bytes.size());
  return bytes;
}

std::vector<double> to_doubles(const Tensor& t, const Stream& stream) {
  Tensor host = t.device().is_cpu() ? t : t.to(Device::cpu(), stream);
  stream.synchronize();
  std::vector<double> out(static_cast<size_t>(t.numel()));
  const auto* bytes = static_cast<const unsigned char*>(host.data_ptr());
  const size_t esize = dtype_size(t.dtype());
  for (size_t i = 0; i < out.size(); ++i) out[i] = detail::element_value(bytes + i * esize, t.dtype());
  return out;
}

double default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64:
      return 1e-12;
    case DType::f32:
      return 1e-5;
    case DType::f16:
      return 2e-3;
    case DType::bf16:
      return 1e-2;
    default:
      return 0.0;
  }
}

::testing::AssertionResult all_close(const std::vector<double>& actual, const std::vector<double>& expected,
                                     double rtol, double atol) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << actual.size() << " vs " << expected.size();
  }
  size_t failures = 0, worst = 0;
  double worst_ratio = -1.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(actual[i]) && std::isnan(expected[i])) continue;  // NaN where NaN is expected
    if (actual[i] == expected[i]) continue;                          // equal, infinities included
    const double err = std::abs(actual[i] - expected[i]);
    const double allowed = atol + rtol * std::abs(expected[i]);
    // NaN on one side only, or beyond tolerance; the ratio ranks elements for the report.
    const double ratio = std::isnan(err) ? INFINITY : err / (allowed > 0 ? allowed : 1e-300);
    if (std::isnan(err) || err > allowed) ++failures;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  std::ostringstream msg;
  msg.precision(10);
  msg << failures << " of " << actual.size() << " elements differ (rtol " << rtol << ", atol " << atol
      << "); worst at index " << worst << ": actual " << actual[worst] << ", expected " << expected[worst]
      << ", |error| " << std::abs(actual[worst] - expected[worst]);
  return ::testing::AssertionFailure() << msg.str();
}

::testing::AssertionResult tensors_close(const Tensor& actual, const Tensor& expected, const Stream& stream,
                                         double rtol, double atol) {
  if (actual.shape() != expected.shape()) {
    return ::testing::AssertionFailure() << "shapes differ: " << actual.shape().str() << " vs "
                                         << expected.shape().str();
  }
  return all_close(to_doubles(actual, stream), to_doubles(expected, stream), rtol, atol);
}

::testing::AssertionResult tensors_close(const Tensor& actual, const Tensor& expected, const Stream& stream) {
  const double tol = default_tolerance(actual.dtype());
  return tensors_close(actual, expected, stream, tol, tol);
}

::testing::AssertionResult identical_values(const std::vector<double>& actual, const std::vector<double>& expected) {
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

}  // namespace baton::testing
