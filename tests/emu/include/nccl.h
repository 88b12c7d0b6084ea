// Emulated GPU (EMU builds): the NCCL API baton calls today (version and error strings), with
// NCCL's result codes; implemented by tests/emu/libraries/nccl.cc.
#pragma once

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

#ifdef __cplusplus
extern "C" {
#endif

// The library version as NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch.
ncclResult_t ncclGetVersion(int* version);
const char* ncclGetErrorString(ncclResult_t result);

#ifdef __cplusplus
}
#endif
