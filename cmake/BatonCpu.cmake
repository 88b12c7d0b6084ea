# The CPU engine: BATON_DNNL=AUTO|ON|OFF finds oneDNN (Debian's libdnnl-dev), baton's float32 engine
# for convolution and matrix products; BATON_OPENMP=AUTO|ON|OFF finds OpenMP, the one thread pool
# that oneDNN (built with OpenMP) and baton's own parallel loops share (runtime/core/cpu_threads.h).
# Sanitizer builds: AUTO means OFF for both under ThreadSanitizer (neither oneDNN nor the OpenMP
# runtime is instrumented, so TSan would report their synchronisation as races) and OFF for OpenMP
# under the other sanitizers (clang's OpenMP runtime is not the one oneDNN loads). Included after
# BatonSanitize.
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

set(BATON_HAVE_DNNL OFF)
if(NOT BATON_DNNL STREQUAL "OFF")
  if(BATON_DNNL STREQUAL "ON")
    find_package(dnnl REQUIRED)
  else()
    find_package(dnnl QUIET)
  endif()
  if(dnnl_FOUND)
    set(BATON_HAVE_DNNL ON)
    message(STATUS "baton: oneDNN ${dnnl_VERSION} is the float32 CPU engine")
  else()
    message(STATUS "baton: oneDNN not found (install libdnnl-dev): float32 CPU kernels use the reference "
                   "implementations, several times slower")
  endif()
endif()

set(BATON_HAVE_OPENMP OFF)
if(NOT BATON_OPENMP STREQUAL "OFF")
  if(BATON_OPENMP STREQUAL "ON")
    find_package(OpenMP REQUIRED COMPONENTS CXX)
  else()
    find_package(OpenMP QUIET COMPONENTS CXX)
  endif()
  if(OpenMP_CXX_FOUND)
    set(BATON_HAVE_OPENMP ON)
  else()
    message(STATUS "baton: OpenMP not found: baton's own CPU loops run on one thread")
  endif()
endif()

foreach(_baton_flag DNNL OPENMP)
  if(BATON_HAVE_${_baton_flag})
    set(BATON_HAVE_${_baton_flag}_01 1)
  else()
    set(BATON_HAVE_${_baton_flag}_01 0)
  endif()
endforeach()
