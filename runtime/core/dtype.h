// DType: the element types a tensor can hold, with names, sizes and host-side 16-bit floats.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

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

// The C++ element type of each DType, in kAllDTypes' order (for typed accessors and CPU kernels).
template <typename... Elements>
struct DTypeElements {
  // The DType whose element type is T; a type that is none of them does not compile.
  template <typename T>
  static constexpr DType dtype_of() {
    constexpr bool matches[] = {std::is_same_v<T, Elements>...};
    static_assert((std::is_same_v<T, Elements> || ...), "no DType has this element type");
    size_t index = 0;
    while (!matches[index]) ++index;
    return kAllDTypes[index];
  }
};
using AllDTypeElements = DTypeElements<float, double, Half, BFloat16, int32_t, int64_t, uint8_t>;

template <typename T>
inline constexpr DType dtype_of = AllDTypeElements::dtype_of<T>();

}  // namespace baton
