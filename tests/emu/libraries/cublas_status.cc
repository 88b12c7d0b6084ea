// Emulated GPU: cuBLAS's status names and descriptions (cublasGetStatusName, cublasGetStatusString).
#include <cublas_v2.h>

#include "baton_emu/status_text.h"

namespace {

constexpr baton_emu::StatusText<cublasStatus_t> kCublasStatuses[] = {
    {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success"},
    {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED", "the library was not initialized"},
    {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
    {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE", "an invalid numeric value was used as an argument"},
    {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH", "an absent device architectural feature is required"},
    {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"},
    {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
    {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
    {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported"},
    {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR", "error detected trying to check the license"},
};

}  // namespace

extern "C" {

const char* cublasGetStatusName(cublasStatus_t status) {
  const auto* entry = baton_emu::find_status(kCublasStatuses, status);
  return entry != nullptr ? entry->name : "<unrecognized cuBLAS status>";
}

const char* cublasGetStatusString(cublasStatus_t status) {
  const auto* entry = baton_emu::find_status(kCublasStatuses, status);
  return entry != nullptr ? entry->description : "unknown error";
}

}  // extern "C"
