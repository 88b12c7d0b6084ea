// Emulated __nv_bfloat16 (the top 16 bits of a float) with CUDA's conversions: float -> bf16
// rounds to nearest even (__float2bfloat16_rn, also the constructor's), NaN stays a quiet NaN;
// arithmetic is done in float and rounded back (correctly rounded, as the hardware's).
#pragma once

#include <cstdint>
#include <cstring>

#include "cuda_fp16.h"

struct __nv_bfloat16_raw {
  unsigned short x;
};

inline float baton_emu_bf16_bits_to_float(unsigned short h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline unsigned short baton_emu_float_to_bf16_bits_rn(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((bits >> 16) | 0x40u);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<unsigned short>(bits >> 16);
}

struct __nv_bfloat16 {
  unsigned short x;
  __nv_bfloat16() = default;
  constexpr __nv_bfloat16(__nv_bfloat16_raw raw) : x(raw.x) {}
  __nv_bfloat16(float f) : x(baton_emu_float_to_bf16_bits_rn(f)) {}
  __nv_bfloat16(double d) : __nv_bfloat16(static_cast<float>(d)) {}
  __nv_bfloat16(int i) : __nv_bfloat16(static_cast<float>(i)) {}
  operator float() const { return baton_emu_bf16_bits_to_float(x); }
  operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{x}; }
};
typedef __nv_bfloat16 nv_bfloat16;

inline float __bfloat162float(__nv_bfloat16 h) { return baton_emu_bf16_bits_to_float(h.x); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16_raw{baton_emu_float_to_bf16_bits_rn(f)}; }
inline __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }
inline __nv_bfloat16 __float2bfloat16_rz(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16_raw{static_cast<unsigned short>((bits >> 16) | 0x40u)};
  return __nv_bfloat16_raw{static_cast<unsigned short>(bits >> 16)};
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) { return __nv_bfloat16_raw{bits}; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.x; }

#define BATON_EMU_BF16_OP(op)                                          \
  inline __nv_bfloat16 operator op(__nv_bfloat16 a, __nv_bfloat16 b) { \
    return __float2bfloat16_rn(float(a) op float(b));                  \
  }                                                                    \
  inline __nv_bfloat16& operator op##=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = a op b; }
BATON_EMU_BF16_OP(+)
BATON_EMU_BF16_OP(-)
BATON_EMU_BF16_OP(*)
BATON_EMU_BF16_OP(/)
#undef BATON_EMU_BF16_OP
inline __nv_bfloat16 operator-(__nv_bfloat16 a) {
  return __nv_bfloat16_raw{static_cast<unsigned short>(a.x ^ 0x8000u)};
}
