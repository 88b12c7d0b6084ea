# The CPU engine: BATON_DNNL=AUTO|ON|OFF finds oneDNN (Debian's libdnnl-dev), baton's float32 engine
# for convolution and matrix products; BATON_OPENMP=AUTO|ON|OFF finds OpenMP, the one thread pool
# that oneDNN (built with OpenMP) and baton's own parallel loops share (runtime/core/cpu_threads.h).
# Sanitizer builds: AUTO means OFF for both under ThreadSanitizer (neither oneDNN nor the OpenMP
# runtime is instrumented, so TSan would report their synchronisation as races) and OFF for OpenMP
# under the other sanitizers (clang's OpenMP runtime is not the one oneDNN loads). Included after
# BatonSanitize.
include(BatonFind)
set(BATON_DNNL "AUTO" CACHE STRING "Use oneDNN as the float32 CPU engine: AUTO, ON, OFF")
set_property(CACHE BATON_DNNL PROPERTY STRINGS AUTO ON OFF)
set(BATON_OPENMP "AUTO" CACHE STRING "Run CPU kernels on all cores with OpenMP: AUTO, ON, OFF")
set_property(CACHE BATON_OPENMP PROPERTY STRINGS AUTO ON OFF)

# `option`: the cache option to turn off; `why`: why a sanitizer build turns it off.
macro(_baton_cpu_sanitizer_off option why)
  if(${option} STREQUAL "ON")
    message(FATAL_ERROR "${option}=ON cannot be used with BATON_SANITIZE=${BATON_SANITIZE}: ${why}")
  endif()
  set(${option} OFF)
endmacro()
if(BATON_SANITIZE STREQUAL "thread")
  _baton_cpu_sanitizer_off(BATON_DNNL "oneDNN's OpenMP threads are not instrumented")
endif()
if(NOT BATON_SANITIZE STREQUAL "")
  _baton_cpu_sanitizer_off(BATON_OPENMP "the OpenMP runtime is not instrumented")
endif()

# Debian's oneDNN is built with an OpenCL GPU runtime, and its CMake package then requires OpenCL's
# headers and loader (ocl-icd-opencl-dev, which tools/install-deps.sh installs): without them,
# find_package(dnnl) stops the configuration even when asked QUIET. Check first and say what is missing.
function(_baton_dnnl_needs_missing_opencl result)
  set(${result} OFF PARENT_SCOPE)
  find_file(_baton_dnnl_config NAMES dnnl-config.cmake
            PATH_SUFFIXES lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/dnnl lib/cmake/dnnl lib64/cmake/dnnl)
  if(NOT _baton_dnnl_config)
    return()
  endif()
  file(STRINGS "${_baton_dnnl_config}" _baton_ocl REGEX "set\\(DNNL_GPU_RUNTIME \"OCL\"\\)")
  unset(_baton_dnnl_config CACHE)
  if(_baton_ocl)
    find_package(OpenCL QUIET)
    if(NOT OpenCL_FOUND)
      set(${result} ON PARENT_SCOPE)
    endif()
  endif()
endfunction()

set(BATON_HAVE_DNNL OFF)
if(NOT BATON_DNNL STREQUAL "OFF")
  _baton_dnnl_needs_missing_opencl(_baton_dnnl_opencl_missing)
  string(CONCAT _baton_dnnl_opencl_why "the installed oneDNN's CMake package requires OpenCL, whose headers or "
                "loader are missing (apt-get install ocl-icd-opencl-dev, or run tools/install-deps.sh)")
  if(_baton_dnnl_opencl_missing AND BATON_DNNL STREQUAL "ON")
    message(FATAL_ERROR "BATON_DNNL=ON: ${_baton_dnnl_opencl_why}")
  elseif(_baton_dnnl_opencl_missing)
    message(STATUS "baton: oneDNN not used: ${_baton_dnnl_opencl_why}; float32 CPU kernels use the reference "
                   "implementations, several times slower")
  elseif(BATON_DNNL STREQUAL "ON")
    find_package(dnnl REQUIRED)
  else()
    find_package(dnnl QUIET)
  endif()
  if(dnnl_FOUND)
    set(BATON_HAVE_DNNL ON)
    message(STATUS "baton: oneDNN ${dnnl_VERSION} is the float32 CPU engine")
  elseif(NOT _baton_dnnl_opencl_missing)
    message(STATUS "baton: oneDNN not found (install libdnnl-dev): float32 CPU kernels use the reference "
                   "implementations, several times slower")
  endif()
endif()

set(BATON_HAVE_OPENMP OFF)
baton_find_cxx_package(BATON_OPENMP OpenMP)
if(OpenMP_CXX_FOUND)
  set(BATON_HAVE_OPENMP ON)
elseif(NOT BATON_OPENMP STREQUAL "OFF")
  message(STATUS "baton: OpenMP not found: baton's own CPU loops run on one thread")
endif()

baton_have_01(DNNL)
baton_have_01(OPENMP)
