// BATON_KERNEL_FN marks a small function compiled for both the host and the device, so that the CPU
// reference and the CUDA kernels evaluate one definition of a formula.
#pragma once

#if defined(__CUDACC__)
#define BATON_KERNEL_FN __host__ __device__ __forceinline__
#else
#define BATON_KERNEL_FN inline
#endif
