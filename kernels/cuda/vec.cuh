// CUDA helpers of the training-op kernels: W-element vectors loaded and stored with one instruction
// (W = 16 / sizeof(T) makes a 16-byte pack, W = 1 a scalar) and grid-stride loop indices.
#pragma once

#include <cstdint>

namespace baton::kernels::cuda {

// The widest vector of T that one 16-byte access moves.
template <typename T>
inline constexpr int kVecWidth = static_cast<int>(16 / sizeof(T));

template <typename T, int W>
struct alignas(sizeof(T) * W) Vec {
  T v[W];
};

template <int W, typename T>
__device__ __forceinline__ Vec<T, W> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T, W>*>(p);
}

template <int W, typename T>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, W>& v) {
  *reinterpret_cast<Vec<T, W>*>(p) = v;
}

// This thread's index in the grid and the number of threads in the grid (one grid-stride step).
__device__ __forceinline__ int64_t grid_thread() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

}  // namespace baton::kernels::cuda
