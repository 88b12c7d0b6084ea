// Errors of the emulated runtime: names and strings as CUDA's, the per-thread last error (every
// failed runtime call records it, cudaGetLastError returns and clears it), and fatal aborts.
#include <cstdio>
#include <cstdlib>

#include "baton_emu/status_text.h"
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

namespace {

constexpr baton_emu::StatusText<cudaError_t> kCudaErrors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled", "peer access is already enabled"},
    {cudaErrorPeerAccessNotEnabled, "cudaErrorPeerAccessNotEnabled", "peer access has not been enabled"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

}  // namespace

const char* cudaGetErrorName(cudaError_t error) {
  const auto* entry = baton_emu::find_status(kCudaErrors, error);
  return entry != nullptr ? entry->name : "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  const auto* entry = baton_emu::find_status(kCudaErrors, error);
  return entry != nullptr ? entry->description : "unrecognized error code";
}
