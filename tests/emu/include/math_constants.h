// The CUDA math constants baton's kernels use (emulated GPU).
#pragma once

#define CUDART_INF (__builtin_huge_val())
#define CUDART_INF_F (__builtin_huge_valf())
#define CUDART_NAN (__builtin_nan(""))
#define CUDART_NAN_F (__builtin_nanf(""))
#define CUDART_PI_F 3.141592654f
#define CUDART_PI 3.1415926535897931e+0
