// CUDA's built-in vector types (with their alignments) and dim3, for the emulated GPU.
#pragma once

#define BATON_EMU_VECTOR2(T, name, align) \
  struct alignas(align) name {            \
    T x, y;                               \
  };                                      \
  inline name make_##name(T x, T y) { return name{x, y}; }
#define BATON_EMU_VECTOR3(T, name) \
  struct name {                    \
    T x, y, z;                     \
  };                               \
  inline name make_##name(T x, T y, T z) { return name{x, y, z}; }
#define BATON_EMU_VECTOR4(T, name, align) \
  struct alignas(align) name {            \
    T x, y, z, w;                         \
  };                                      \
  inline name make_##name(T x, T y, T z, T w) { return name{x, y, z, w}; }

BATON_EMU_VECTOR2(int, int2, 8)
BATON_EMU_VECTOR2(unsigned, uint2, 8)
BATON_EMU_VECTOR2(float, float2, 8)
BATON_EMU_VECTOR2(double, double2, 16)
BATON_EMU_VECTOR2(long long, longlong2, 16)
BATON_EMU_VECTOR3(int, int3)
BATON_EMU_VECTOR3(unsigned, uint3)
BATON_EMU_VECTOR3(float, float3)
BATON_EMU_VECTOR4(int, int4, 16)
BATON_EMU_VECTOR4(unsigned, uint4, 16)
BATON_EMU_VECTOR4(float, float4, 16)
BATON_EMU_VECTOR4(unsigned short, ushort4, 8)
BATON_EMU_VECTOR4(double, double4, 16)

#undef BATON_EMU_VECTOR2
#undef BATON_EMU_VECTOR3
#undef BATON_EMU_VECTOR4

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};
