// The runtime's door to driver API entry points (cudaGetDriverEntryPoint*), as in the toolkit's
// cuda_runtime_api.h. The emulated driver offers cuDevicePrimaryCtxGetState (tests/emu/runtime/).
#pragma once

#include "baton_emu/driver_types.h"

enum cudaDriverEntryPointQueryResult : int {
  cudaDriverEntryPointSuccess = 0,
  cudaDriverEntryPointSymbolNotFound = 1,
  cudaDriverEntryPointVersionNotSufficent = 2,
};

#define cudaEnableDefault 0x0

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** function, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult* status = nullptr);
cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** function, unsigned int cuda_version,
                                             unsigned long long flags,
                                             cudaDriverEntryPointQueryResult* status = nullptr);
