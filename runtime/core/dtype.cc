// DType names and sizes; float <-> binary16 conversion with round-to-nearest-even.
#include "runtime/core/dtype.h"

#include <bit>
#include <cstring>

#include "runtime/core/enum_table.h"
#include "runtime/core/error.h"

namespace baton {

std::string_view dtype_name(DType dtype) {
  constexpr std::string_view kNames[] = {"f32", "f64", "f16", "bf16", "i32", "i64", "u8"};
  const std::string_view name = enum_lookup<DType::u8>(dtype, kNames, "");
  BATON_CHECK(!name.empty(), "invalid DType value ", static_cast<int>(dtype));
  return name;
}

DType parse_dtype(std::string_view name) {
  for (DType d : kAllDTypes) {
    if (dtype_name(d) == name) return d;
  }
  BATON_FAIL("unknown dtype '", name, "': expected one of f32, f64, f16, bf16, i32, i64, u8");
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f64:
    case DType::i64:
      return 8;
    case DType::f32:
    case DType::i32:
      return 4;
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::u8:
      return 1;
  }
  BATON_FAIL("invalid DType value ", static_cast<int>(dtype));
}

bool is_floating(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f64 || dtype == DType::f16 || dtype == DType::bf16;
}

Half float_to_half(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN (NaN keeps a quiet payload bit)
    return Half{static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x0200u | ((abs >> 13) & 0x3ffu) : 0u))};
  }
  if (abs >= 0x477ff000u) {  // rounds to a value >= 65520: overflow to infinity
    return Half{static_cast<uint16_t>(sign | 0x7c00u)};
  }
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) return Half{static_cast<uint16_t>(sign)};  // < 2^-25 rounds to zero
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;  // 14 + 13 - (exponent - 127)
    uint32_t result = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (result & 1u))) ++result;
    return Half{static_cast<uint16_t>(sign | result)};
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits to even.
  uint32_t result = ((abs - 0x38000000u) >> 13);
  const uint32_t remainder = abs & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1u))) ++result;
  return Half{static_cast<uint16_t>(sign | result)};
}

float half_to_float(Half value) {
  const uint32_t sign = static_cast<uint32_t>(value.bits & 0x8000u) << 16;
  uint32_t exponent = (value.bits >> 10) & 0x1fu;
  uint32_t mantissa = value.bits & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1fu) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal half: normalise
    exponent = 113u;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

}  // namespace baton
