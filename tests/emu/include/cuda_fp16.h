// Emulated __half (IEEE binary16) with CUDA's conversions: float -> half rounds to nearest even
// (__float2half_rn, also the constructor's rounding); arithmetic is done in float and rounded back,
// which for + - * / gives the correctly rounded half result, as the hardware's.
#pragma once

#include <cstdint>
#include <cstring>

struct __half_raw {
  unsigned short x;
};

inline float baton_emu_half_bits_to_float(unsigned short h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int shift = -1;
    do {
      ++shift;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | ((112 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline unsigned short baton_emu_float_to_half_bits_rn(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u));
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
  if (magnitude < 0x38800000u) {                                               // below 2^-14: subnormal or zero
    if (magnitude < 0x33000000u) return sign;                                  // at most 2^-25 (ties to even zero)
    const uint32_t exponent = magnitude >> 23, mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;
    uint32_t q = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t r = magnitude - 0x38000000u;  // rebias the exponent 127 -> 15
  r = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
  return static_cast<uint16_t>(sign | r);
}

struct __half {
  unsigned short x;
  __half() = default;
  constexpr __half(__half_raw raw) : x(raw.x) {}
  __half(float f) : x(baton_emu_float_to_half_bits_rn(f)) {}
  __half(double d) : __half(static_cast<float>(d)) {}
  __half(int i) : __half(static_cast<float>(i)) {}
  operator float() const { return baton_emu_half_bits_to_float(x); }
  operator __half_raw() const { return __half_raw{x}; }
};
typedef __half half;
struct alignas(4) __half2 {
  __half x, y;
};
typedef __half2 half2;

inline float __half2float(__half h) { return baton_emu_half_bits_to_float(h.x); }
inline __half __float2half_rn(float f) { return __half_raw{baton_emu_float_to_half_bits_rn(f)}; }
inline __half __float2half(float f) { return __float2half_rn(f); }
inline __half __ushort_as_half(unsigned short bits) { return __half_raw{bits}; }
inline unsigned short __half_as_ushort(__half h) { return h.x; }
inline bool __hisnan(__half h) { return (h.x & 0x7c00u) == 0x7c00u && (h.x & 0x3ffu) != 0; }

#define BATON_EMU_HALF_OP(op)                                                                     \
  inline __half operator op(__half a, __half b) { return __float2half_rn(float(a) op float(b)); } \
  inline __half& operator op##=(__half& a, __half b) { return a = a op b; }
BATON_EMU_HALF_OP(+)
BATON_EMU_HALF_OP(-)
BATON_EMU_HALF_OP(*)
BATON_EMU_HALF_OP(/)
#undef BATON_EMU_HALF_OP
inline __half operator-(__half a) { return __half_raw{static_cast<unsigned short>(a.x ^ 0x8000u)}; }
inline __half __hadd(__half a, __half b) { return a + b; }
inline __half __hmul(__half a, __half b) { return a * b; }
