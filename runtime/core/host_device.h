// BATON_HOST_DEVICE marks a small function compiled for both the host and the device (under nvcc;
// a plain inline function elsewhere), so that host code and CUDA kernels evaluate one definition:
// Philox (runtime/core/philox.h) and the per-element formulas of the ops (kernels/*_math.h).
#pragma once

#if defined(__CUDACC__)
#define BATON_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define BATON_HOST_DEVICE inline
#endif
