// CUDA helpers of the grid-stride kernels: W consecutive elements of T moved with 16-byte vector
// accesses (W = kVecWidth<T> is one 16-byte pack, W = 1 a scalar), the alignment test that picks
// the vector path (a scalar path serves pointers off 16-byte alignment: views may start anywhere),
// and the grid-stride loop indices. Launch shapes come from runtime/core/cuda/launch.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace baton::kernels::cuda {

inline constexpr int kVecBytes = 16;

// The widest vector of T that one 16-byte access moves.
template <typename T>
inline constexpr int kVecWidth = static_cast<int>(kVecBytes / sizeof(T));

// W consecutive elements of T. Up to 16 bytes (a power of two) it is one access aligned to its
// size; beyond, a whole number of 16-byte packs, one access each (as in a cast between dtypes of
// different sizes, where a thread moves one pack of the narrower type).
template <typename T, int W>
struct alignas(sizeof(T) * W < kVecBytes ? sizeof(T) * W : kVecBytes) Vec {
  static constexpr size_t kBytes = sizeof(T) * W;
  static_assert(kBytes <= kVecBytes ? (kBytes & (kBytes - 1)) == 0 : kBytes % kVecBytes == 0,
                "a Vec is a power of two up to 16 bytes, or whole 16-byte packs");
  T v[W];
};

// The W elements at p, which is aligned to the vector (16-byte aligned for W >= kVecWidth<T>).
template <int W, typename T>
__device__ __forceinline__ Vec<T, W> load_vec(const T* p) {
  if constexpr (Vec<T, W>::kBytes <= kVecBytes) {
    return *reinterpret_cast<const Vec<T, W>*>(p);
  } else {
    // One 16-byte access per pack, its elements copied into the vector one by one (no type-punned
    // store into vec.v, which the compiler cannot see initialise it).
    constexpr int P = kVecWidth<T>;
    Vec<T, W> vec;
#pragma unroll
    for (int k = 0; k < W / P; ++k) {
      const Vec<T, P> pack = reinterpret_cast<const Vec<T, P>*>(p)[k];
#pragma unroll
      for (int j = 0; j < P; ++j) vec.v[k * P + j] = pack.v[j];
    }
    return vec;
  }
}

template <int W, typename T>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, W>& vec) {
  if constexpr (Vec<T, W>::kBytes <= kVecBytes) {
    *reinterpret_cast<Vec<T, W>*>(p) = vec;
  } else {
    // Each pack built element by element from the vector, then stored with one 16-byte access.
    constexpr int P = kVecWidth<T>;
#pragma unroll
    for (int k = 0; k < W / P; ++k) {
      Vec<T, P> pack;
#pragma unroll
      for (int j = 0; j < P; ++j) pack.v[j] = vec.v[k * P + j];
      reinterpret_cast<Vec<T, P>*>(p)[k] = pack;
    }
  }
}

// Whether p may be read and written with 16-byte vector accesses.
inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVecBytes == 0; }

// This thread's index in the grid and the number of threads in the grid (one grid-stride step).
__device__ __forceinline__ int64_t grid_thread() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

}  // namespace baton::kernels::cuda
