// Errors of the emulated runtime: names and strings as CUDA's, the per-thread last error (every
// failed runtime call records it, cudaGetLastError returns and clears it), and fatal aborts.
#include <cstdio>
#include <cstdlib>

#include "runtime_state.h"

namespace baton_emu {
namespace {
thread_local cudaError_t last_error = cudaSuccess;
}  // namespace

void fatal(const std::string& message) {
  std::fprintf(stderr, "baton_emu: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

cudaError_t fail(cudaError_t error, const char* api, const std::string& why) {
  std::fprintf(stderr, "baton_emu: %s: %s (%s)\n", api, why.c_str(), cudaGetErrorName(error));
  last_error = error;
  return error;
}

cudaError_t check_device(int device, const char* api) {
  if (device < 0 || device >= settings().devices) {
    return fail(cudaErrorInvalidDevice, api,
                "device " + std::to_string(device) + " does not exist (" + std::to_string(settings().devices) +
                    " emulated devices; BATON_EMU_DEVICES sets how many)");
  }
  return cudaSuccess;
}

}  // namespace baton_emu

cudaError_t cudaGetLastError() {
  const cudaError_t error = baton_emu::last_error;
  baton_emu::last_error = cudaSuccess;
  return error;
}

cudaError_t cudaPeekAtLastError() { return baton_emu::last_error; }

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError:
      return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidMemcpyDirection:
      return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorNoDevice:
      return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady:
      return "cudaErrorNotReady";
    case cudaErrorPeerAccessAlreadyEnabled:
      return "cudaErrorPeerAccessAlreadyEnabled";
    case cudaErrorPeerAccessNotEnabled:
      return "cudaErrorPeerAccessNotEnabled";
    case cudaErrorLaunchOutOfResources:
      return "cudaErrorLaunchOutOfResources";
    case cudaErrorLaunchFailure:
      return "cudaErrorLaunchFailure";
    case cudaErrorNotSupported:
      return "cudaErrorNotSupported";
    case cudaErrorUnknown:
      return "cudaErrorUnknown";
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInitializationError:
      return "initialization error";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorInvalidMemcpyDirection:
      return "invalid copy direction for memcpy";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorPeerAccessAlreadyEnabled:
      return "peer access is already enabled";
    case cudaErrorPeerAccessNotEnabled:
      return "peer access has not been enabled";
    case cudaErrorLaunchOutOfResources:
      return "too many resources requested for launch";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure";
    case cudaErrorNotSupported:
      return "operation not supported";
    case cudaErrorUnknown:
      return "unknown error";
  }
  return "unrecognized error code";
}
