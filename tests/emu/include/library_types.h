// Emulated GPU (EMU builds): the CUDA library data types baton names (cudaDataType_t, and
// libraryPropertyType for cublasGetProperty), with the enumerator values of the CUDA toolkit.
#pragma once

typedef enum cudaDataType_t {
  CUDA_R_32F = 0,   // float
  CUDA_R_64F = 1,   // double
  CUDA_R_16F = 2,   // half
  CUDA_R_16BF = 14  // nv_bfloat16
} cudaDataType;

typedef enum libraryPropertyType_t { MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2 } libraryPropertyType;
