// first_non_finite: IEEE exponent-all-ones tests for f16 and bf16, std::isfinite for f32 and f64.
#include "runtime/train/finite_values.h"

#include <cmath>
#include <cstring>

namespace baton {
namespace {

template <typename T>
T element(const void* bytes, int64_t index) {
  T value;
  std::memcpy(&value, static_cast<const char*>(bytes) + index * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return value;
}

// Sign bit, and whether the exponent is all ones with a zero mantissa (infinity) or not (NaN).
struct Special {
  bool negative;
  bool infinity;
};

Special classify(const void* bytes, int64_t index, DType dtype) {
  switch (dtype) {
    case DType::f32: {
      const float v = element<float>(bytes, index);
      return {std::signbit(v), std::isinf(v)};
    }
    case DType::f64: {
      const double v = element<double>(bytes, index);
      return {std::signbit(v), std::isinf(v)};
    }
    case DType::f16: {
      const uint16_t bits = element<uint16_t>(bytes, index);
      return {(bits & 0x8000) != 0, (bits & 0x03FF) == 0};
    }
    case DType::bf16: {
      const uint16_t bits = element<uint16_t>(bytes, index);
      return {(bits & 0x8000) != 0, (bits & 0x007F) == 0};
    }
    default:
      return {false, false};
  }
}

template <typename T, typename Finite>
int64_t scan(const void* bytes, int64_t count, Finite finite) {
  for (int64_t i = 0; i < count; ++i) {
    if (!finite(element<T>(bytes, i))) return i;
  }
  return -1;
}

}  // namespace

int64_t first_non_finite(const void* bytes, int64_t count, DType dtype) {
  switch (dtype) {
    case DType::f32:
      return scan<float>(bytes, count, [](float v) { return std::isfinite(v); });
    case DType::f64:
      return scan<double>(bytes, count, [](double v) { return std::isfinite(v); });
    case DType::f16:
      return scan<uint16_t>(bytes, count, [](uint16_t bits) { return (bits & 0x7C00) != 0x7C00; });
    case DType::bf16:
      return scan<uint16_t>(bytes, count, [](uint16_t bits) { return (bits & 0x7F80) != 0x7F80; });
    default:
      return -1;
  }
}

std::string non_finite_name(const void* bytes, int64_t index, DType dtype) {
  const Special s = classify(bytes, index, dtype);
  if (!s.infinity) return "NaN";
  return s.negative ? "-inf" : "inf";
}

int64_t first_negative(const void* bytes, int64_t count, DType dtype) {
  const auto* data = static_cast<const unsigned char*>(bytes);
  const size_t size = dtype_size(dtype);
  for (int64_t i = 0; i < count; ++i) {
    const unsigned char* element = data + static_cast<size_t>(i) * size;
    if ((element[size - 1] & 0x80) == 0) continue;  // little-endian: the sign bit is the last byte's top bit
    if (!is_floating(dtype)) return i;
    bool magnitude = (element[size - 1] & 0x7f) != 0;  // -0.0 has every other bit clear
    for (size_t b = 0; b + 1 < size && !magnitude; ++b) magnitude = element[b] != 0;
    if (magnitude) return i;
  }
  return -1;
}

}  // namespace baton
