// DType: the element types a tensor can hold, with names, sizes and host-side 16-bit floats.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace baton {

enum class DType : uint8_t { f32, f64, f16, bf16, i32, i64, u8 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16,
                                       DType::i32, DType::i64, DType::u8};

// "f32", "f64", "f16", "bf16", "i32", "i64", "u8".
std::string_view dtype_name(DType dtype);
// Parses the names above; throws baton::Error listing them otherwise.
DType parse_dtype(std::string_view name);
size_t dtype_size(DType dtype);
bool is_floating(DType dtype);

// IEEE 754 binary16, stored as bits. Conversions round to nearest even, as CUDA's __float2half_rn.
struct Half {
  uint16_t bits = 0;
};
// bfloat16 (the top half of a float32), stored as bits. Conversions round to nearest even.
struct BFloat16 {
  uint16_t bits = 0;
};

Half float_to_half(float value);
float half_to_float(Half value);

// Inline and branch-free, so that the CPU kernels' loops of conversions vectorise. NaN stays a quiet NaN.
inline BFloat16 float_to_bfloat16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (x >> 16) | 0x0040u;
  return BFloat16{static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded)};
}
inline float bfloat16_to_float(BFloat16 value) { return std::bit_cast<float>(static_cast<uint32_t>(value.bits) << 16); }

// Maps a C++ element type to its DType (for typed accessors and CPU kernels).
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::f64;
};
template <>
struct DTypeOf<Half> {
  static constexpr DType value = DType::f16;
};
template <>
struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::bf16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::i32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::i64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::u8;
};

template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace baton
