// The CUDA kernel language compiled as plain C++ for the emulated GPU: the function qualifiers,
// __syncthreads, the warp shuffles and votes with masks and widths, atomics and the intrinsics
// baton's kernels use. (__shared__ declarations are rewritten by the launch rewriter.)
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "baton_emu/simt.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __constant__
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n) alignas(n)

inline constexpr int warpSize = 32;

inline void __syncthreads() { ::baton_emu::sync_block(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  (void)::baton_emu::warp_collective(::baton_emu::WarpCollective::syncwarp, mask, 0, "__syncwarp");
}

namespace baton_emu::detail {

// Bits of a shuffled value (up to 8 bytes, trivially copyable), in and out of the exchange.
template <typename T>
uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "a shuffle moves up to 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <typename T>
T from_bits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

void check_width(int width, const char* what);

// The shuffle: every lane of the mask publishes v; the caller reads lane `src` (a lane of its warp).
// A source lane outside the mask gives an undefined value on a GPU: poison (all bits set) here.
template <typename T>
T shuffle(unsigned mask, T v, int src, int width, const char* what) {
  check_width(width, what);
  const WarpValues values = warp_collective(WarpCollective::shuffle, mask, to_bits(v), what);
  if ((values.mask >> src & 1u) == 0) return from_bits<T>(~uint64_t{0});
  return from_bits<T>(values.value[src]);
}

}  // namespace baton_emu::detail

template <typename T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = warpSize) {
  const int lane = ::baton_emu::lane_id();
  const int base = lane & ~(width - 1);
  return ::baton_emu::detail::shuffle(mask, v, base + (src_lane & (width - 1)), width, "__shfl_sync");
}
template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  const int lane = ::baton_emu::lane_id();
  const int in_segment = lane & (width - 1);
  const int src = in_segment >= static_cast<int>(delta) ? lane - static_cast<int>(delta) : lane;
  return ::baton_emu::detail::shuffle(mask, v, src, width, "__shfl_up_sync");
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  const int lane = ::baton_emu::lane_id();
  const int in_segment = lane & (width - 1);
  const int src = in_segment + static_cast<int>(delta) < width ? lane + static_cast<int>(delta) : lane;
  return ::baton_emu::detail::shuffle(mask, v, src, width, "__shfl_down_sync");
}
// A lane may read from its own or an earlier segment of `width` lanes; a later one gives its own value.
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize) {
  const int lane = ::baton_emu::lane_id();
  const int src = lane ^ lane_mask;
  const int segment_end = (lane & ~(width - 1)) + width;
  return ::baton_emu::detail::shuffle(mask, v, src >= segment_end || src > 31 ? lane : src, width, "__shfl_xor_sync");
}

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  const auto values =
      ::baton_emu::warp_collective(::baton_emu::WarpCollective::ballot, mask, predicate != 0, "__ballot_sync");
  unsigned bits = 0;
  for (int l = 0; l < 32; ++l) {
    if ((values.mask >> l & 1u) && values.value[l] != 0) bits |= 1u << l;
  }
  return bits;
}
inline int __all_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) == mask; }
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }

// Atomics. The threads of a grid never run at the same time (one fiber at a time under the device
// execution lock), so a read-modify-write is atomic.
template <typename T>
T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}
template <typename T>
T atomicSub(T* address, T value) {
  const T old = *address;
  *address = old - value;
  return old;
}
template <typename T>
T atomicMax(T* address, T value) {
  const T old = *address;
  if (value > old) *address = value;
  return old;
}
template <typename T>
T atomicMin(T* address, T value) {
  const T old = *address;
  if (value < old) *address = value;
  return old;
}
template <typename T>
T atomicExch(T* address, T value) {
  const T old = *address;
  *address = value;
  return old;
}
template <typename T>
T atomicCAS(T* address, T compare, T value) {
  const T old = *address;
  if (old == compare) *address = value;
  return old;
}
inline unsigned atomicInc(unsigned* address, unsigned limit) {
  const unsigned old = *address;
  *address = old >= limit ? 0 : old + 1;
  return old;
}
inline void __threadfence() {}
inline void __threadfence_block() {}

// Bit casts and conversions with an explicit rounding mode.
inline float __int_as_float(int v) { return ::baton_emu::detail::from_bits<float>(static_cast<uint32_t>(v)); }
inline int __float_as_int(float f) { return static_cast<int>(::baton_emu::detail::to_bits(f)); }
inline float __uint_as_float(unsigned v) { return ::baton_emu::detail::from_bits<float>(v); }
inline unsigned __float_as_uint(float f) { return static_cast<unsigned>(::baton_emu::detail::to_bits(f)); }
inline double __longlong_as_double(long long v) {
  return ::baton_emu::detail::from_bits<double>(static_cast<uint64_t>(v));
}
inline long long __double_as_longlong(double d) { return static_cast<long long>(::baton_emu::detail::to_bits(d)); }
inline float __double2float_rn(double v) { return static_cast<float>(v); }
// Toward zero: the nearest float, stepped once toward zero when it lies beyond v (FLT_MAX for a
// finite v past it).
inline float __double2float_rz(double v) {
  const float f = static_cast<float>(v);
  if (std::isnan(v)) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) return std::nextafter(f, 0.0f);
  return f;
}
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((static_cast<uint64_t>(a) * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  __extension__ using Wide = unsigned __int128;
  return static_cast<unsigned long long>((static_cast<Wide>(a) * b) >> 64);
}
template <typename T>
T __ldg(const T* p) {
  return *p;
}
